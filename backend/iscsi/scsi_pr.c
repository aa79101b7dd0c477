/* Persistent reservations (SPC-4 5.13): PERSISTENT RESERVE IN (READ KEYS,
 * READ RESERVATION, REPORT CAPABILITIES, READ FULL STATUS) and OUT
 * (REGISTER, REGISTER AND IGNORE EXISTING KEY, RESERVE, RELEASE, CLEAR,
 * PREEMPT, PREEMPT AND ABORT).
 *
 * State is per LUN and in memory only: it survives sessions (a
 * registration belongs to an I_T nexus, initiator name + ISID, not to a
 * connection) but not a restart of the target, so REPORT CAPABILITIES
 * says PTPL_C=0 and APTPL is refused.  There is one target port, so
 * ALL_TG_PT is accepted and changes nothing.
 * PREEMPT AND ABORT preempts like PREEMPT and aborts the preempted
 * nexuses' tasks on the LUN (each connection is its own session, so a
 * nexus's tasks are its connection's).
 * Changes that take a nexus's registration or reservation away leave it
 * a unit attention (SPC-4 5.13.11): REGISTRATIONS PREEMPTED for the
 * registrations PREEMPT removes, RESERVATIONS PREEMPTED for the others'
 * on CLEAR, RESERVATIONS RELEASED for the other registrants when a
 * registrants-only or all-registrants reservation is released.  A nexus
 * with no connection at that time is not told.
 */
#include "config.h"

#include "backend/iscsi/tgt.h"
#include "backend/iscsi/scsi.h"
#include "backend/iscsi/scsi_sense.h"

#include <stdlib.h>
#include <string.h>

#define PR_MAX_REGS 64
#define PR_OUT_PARAM_LEN 24

enum pr_type {
    PR_WE = 1, PR_EA = 3, PR_WE_RO = 5, PR_EA_RO = 6, PR_WE_AR = 7, PR_EA_AR = 8,
};

enum pr_out_sa {
    PRO_REGISTER = 0, PRO_RESERVE = 1, PRO_RELEASE = 2, PRO_CLEAR = 3, PRO_PREEMPT = 4,
    PRO_PREEMPT_ABORT = 5, PRO_REGISTER_IGNORE = 6,
};

struct pr_reg {
    char initiator[224];
    uint8_t isid[6];
    uint64_t key;
};

_Static_assert(sizeof(((struct pr_reg *)0)->initiator) ==
                   sizeof(((struct tgt_conn *)0)->initiator),
               "a registration keeps the whole initiator name");

struct tgt_pr {
    uint32_t generation;
    struct pr_reg regs[PR_MAX_REGS];
    int nregs;
    int holder;          /* index in regs of the reservation holder, -1: none
                          * (all-registrants types: any registrant holds) */
    int reserved;
    uint8_t type;
};

static int type_valid(uint8_t type)
{
    return type == PR_WE || type == PR_EA || type == PR_WE_RO || type == PR_EA_RO ||
           type == PR_WE_AR || type == PR_EA_AR;
}

static int all_registrants(uint8_t type)
{
    return type == PR_WE_AR || type == PR_EA_AR;
}

static int nexus_of(const struct tgt_pr *pr, const struct tgt_conn *c)
{
    for (int i = 0; i < pr->nregs; i++)
        if (strcmp(pr->regs[i].initiator, c->initiator) == 0 &&
            memcmp(pr->regs[i].isid, c->isid, 6) == 0)
            return i;
    return -1;
}

static int holds(const struct tgt_pr *pr, int reg)
{
    return pr->reserved && reg >= 0 && (all_registrants(pr->type) || pr->holder == reg);
}

int scsi_pr_active(const struct tgt_lun *lun)
{
    return lun->pr && (lun->pr->nregs > 0 || lun->pr->reserved);
}

int scsi_pr_conflict(const struct tgt_task *t, enum tgt_pr_access acc)
{
    const struct tgt_pr *pr = t->lun->pr;
    int reg;

    if (!pr || !pr->reserved || acc == PR_ALLOWED)
        return 0;
    reg = nexus_of(pr, t->conn);
    if (holds(pr, reg))
        return 0;
    switch (pr->type) {
    case PR_WE:
        return acc == PR_WRITES;
    case PR_EA:
        return 1;
    case PR_WE_RO:
    case PR_WE_AR:
        return acc == PR_WRITES && reg < 0;
    default:   /* EA_RO, EA_AR */
        return reg < 0;
    }
}

void scsi_pr_free(struct tgt_lun *lun)
{
    free(lun->pr);
    lun->pr = NULL;
}

/* A nexus's registration goes: the holder of a reservation for one nexus
 * leaving ends it (SPC-4 5.13.11.2.2), a reservation for all registrants
 * ends with its last registrant. */
static void remove_reg(struct tgt_pr *pr, int i)
{
    int last = pr->nregs - 1;

    if (pr->reserved && (all_registrants(pr->type) ? pr->nregs == 1 : pr->holder == i)) {
        pr->reserved = 0;
        pr->holder = -1;
    }
    pr->regs[i] = pr->regs[last];
    if (pr->holder == last)
        pr->holder = i;
    pr->nregs--;
}

static int prep_fail(struct tgt_task *t, uint8_t key, uint16_t asc)
{
    scsi_set_sense(t, key, asc);
    return -1;
}

/* ---- PERSISTENT RESERVE IN ---- */

int scsi_pr_prep_in(struct tgt_task *t)
{
    if ((t->cdb[1] & 0x1f) > 3)
        return prep_fail(t, KEY_ILLEGAL, ASC_INVALID_FIELD_CDB);
    t->dir = DIR_READ;
    return 0;
}

static uint32_t in_read_keys(const struct tgt_pr *pr, uint8_t *d)
{
    uint32_t n = 8;

    for (int i = 0; pr && i < pr->nregs; i++, n += 8)
        put_be64(d + n, pr->regs[i].key);
    return n;
}

static uint32_t in_read_reservation(const struct tgt_pr *pr, uint8_t *d)
{
    if (!pr || !pr->reserved)
        return 8;
    /* All-registrants reservations have no one key: it reads as 0. */
    put_be64(d + 8, all_registrants(pr->type) ? 0 : pr->regs[pr->holder].key);
    d[8 + 13] = pr->type;   /* scope LU_SCOPE (0) */
    return 24;
}

static uint32_t in_report_capabilities(uint8_t *d)
{
    put_be16(d, 8);
    d[2] = 0x04;            /* ATP_C: ALL_TG_PT accepted (one port) */
    d[3] = 0x80;            /* TMV: the type mask is valid */
    d[4] = 0x80 | 0x40 | 0x20 | 0x08 | 0x02;   /* WE_AR EA_RO WE_RO EA WE */
    d[5] = 0x01;            /* EA_AR */
    return 8;
}

/* iSCSI TransportID with ISID (SPC-4 7.6.4.6, format 01b). */
static uint32_t transport_id(const struct pr_reg *r, uint8_t *d)
{
    static const char hex[] = "0123456789abcdef";
    size_t len = strlen(r->initiator);
    uint32_t n = 4;

    d[0] = 0x40 | 0x05;
    memcpy(d + n, r->initiator, len);
    n += (uint32_t)len;
    memcpy(d + n, ",i,0x", 5);
    n += 5;
    for (int i = 0; i < 6; i++) {
        d[n++] = (uint8_t)hex[r->isid[i] >> 4];
        d[n++] = (uint8_t)hex[r->isid[i] & 15];
    }
    d[n++] = 0;
    while (n % 4)
        d[n++] = 0;
    put_be16(d + 2, (uint16_t)(n - 4));
    return n;
}

static uint32_t in_read_full_status(const struct tgt_pr *pr, uint8_t *d)
{
    uint32_t n = 8;

    for (int i = 0; pr && i < pr->nregs; i++) {
        uint8_t *e = d + n;
        uint32_t tid;
        put_be64(e, pr->regs[i].key);
        if (holds(pr, i)) {
            e[12] = 0x01;   /* R_HOLDER */
            e[13] = pr->type;
        }
        put_be16(e + 18, 1);            /* relative target port 1 */
        tid = transport_id(&pr->regs[i], e + 24);
        put_be32(e + 20, tid);
        n += 24 + tid;
    }
    return n;
}

void scsi_pr_exec_in(struct tgt_task *t)
{
    const struct tgt_pr *pr = t->lun->pr;
    uint32_t alloc = get_be16(t->cdb + 7), n;
    /* READ FULL STATUS: 24 bytes and a TransportID of at most 244 */
    uint8_t *d = calloc(1, 8 + PR_MAX_REGS * (24 + 244));

    if (!d) {
        scsi_complete_sense(t, KEY_ABORTED, ASC_INSUFFICIENT_RESOURCES);
        return;
    }
    switch (t->cdb[1] & 0x1f) {
    case 0:
        n = in_read_keys(pr, d);
        break;
    case 1:
        n = in_read_reservation(pr, d);
        break;
    case 2:
        n = in_report_capabilities(d);
        break;
    default:
        n = in_read_full_status(pr, d);
        break;
    }
    if ((t->cdb[1] & 0x1f) != 2) {
        put_be32(d, pr ? pr->generation : 0);
        put_be32(d + 4, n - 8);
    }
    scsi_reply(t, d, n, alloc);
    free(d);
}

/* ---- PERSISTENT RESERVE OUT ---- */

int scsi_pr_prep_out(struct tgt_task *t)
{
    uint8_t sa = t->cdb[1] & 0x1f;
    uint32_t len = get_be32(t->cdb + 5);

    if (sa > PRO_REGISTER_IGNORE)
        return prep_fail(t, KEY_ILLEGAL, ASC_INVALID_FIELD_CDB);
    if (len != PR_OUT_PARAM_LEN)
        return prep_fail(t, KEY_ILLEGAL, ASC_PARAM_LIST_LENGTH);
    t->xfer = len;
    t->dir = DIR_WRITE;
    return 0;
}

/* Unit attention asc (and, when abort, the end of its tasks on the LUN)
 * for the connections of nexus r other than t's. */
static void notify_nexus(struct tgt_task *t, const struct pr_reg *r, uint16_t asc, int abort)
{
    struct tgt_lun *l = t->lun;

    for (struct tgt_conn *o = l->srv->conns; o; o = o->next) {
        if (o == t->conn || o->state == CONN_CLOSED || o->discovery ||
            strcmp(o->initiator, r->initiator) != 0 || memcmp(o->isid, r->isid, 6) != 0)
            continue;
        o->ua_pr[l->index] = asc;
        if (abort)
            tgt_conn_abort_tasks(o, l);
    }
}

/* The same for every registrant but t's nexus. */
static void notify_registrants(struct tgt_task *t, uint16_t asc)
{
    const struct tgt_pr *pr = t->lun->pr;

    for (int i = 0; i < pr->nregs; i++)
        notify_nexus(t, &pr->regs[i], asc, 0);
}

static int pr_get(struct tgt_lun *l)
{
    if (!l->pr) {
        l->pr = calloc(1, sizeof(*l->pr));
        if (!l->pr)
            return -1;
        l->pr->holder = -1;
    }
    return 0;
}

static void out_register(struct tgt_task *t, int reg, uint64_t key, uint64_t sark, int ignore)
{
    struct tgt_pr *pr = t->lun->pr;
    struct pr_reg *r;

    if (reg < 0 ? (!ignore && key != 0) : (!ignore && key != pr->regs[reg].key)) {
        scsi_complete_status(t, ST_CONFLICT);
        return;
    }
    if (sark == 0) {
        if (reg >= 0) {
            remove_reg(pr, reg);
            pr->generation++;
        }
    } else if (reg >= 0) {
        pr->regs[reg].key = sark;
        pr->generation++;
    } else if (pr->nregs == PR_MAX_REGS) {
        scsi_complete_sense(t, KEY_ILLEGAL, ASC_INSUFFICIENT_REG_RESOURCES);
        return;
    } else {
        r = &pr->regs[pr->nregs++];
        memset(r, 0, sizeof(*r));
        /* same size, and the connection's is NUL-terminated */
        memcpy(r->initiator, t->conn->initiator, sizeof(r->initiator));
        memcpy(r->isid, t->conn->isid, 6);
        r->key = sark;
        pr->generation++;
    }
    scsi_complete_status(t, ST_GOOD);
}

static void out_reserve(struct tgt_task *t, int reg, uint8_t type)
{
    struct tgt_pr *pr = t->lun->pr;

    if (pr->reserved) {
        /* The holder asking again for the same type is a no-op. */
        scsi_complete_status(t, holds(pr, reg) && pr->type == type ? ST_GOOD : ST_CONFLICT);
        return;
    }
    pr->reserved = 1;
    pr->type = type;
    pr->holder = all_registrants(type) ? -1 : reg;
    scsi_complete_status(t, ST_GOOD);
}

static void out_release(struct tgt_task *t, int reg, uint8_t type)
{
    struct tgt_pr *pr = t->lun->pr;

    if (!holds(pr, reg)) {   /* none, or another nexus's: nothing to do */
        scsi_complete_status(t, ST_GOOD);
        return;
    }
    if (pr->type != type) {
        scsi_complete_sense(t, KEY_ILLEGAL, ASC_INVALID_RELEASE_PR);
        return;
    }
    pr->reserved = 0;
    pr->holder = -1;
    if (pr->type != PR_WE && pr->type != PR_EA)
        notify_registrants(t, ASC_RESERVATIONS_RELEASED);
    scsi_complete_status(t, ST_GOOD);
}

/* Removes every registration with key sark but keep, telling their
 * nexuses (PREEMPT AND ABORT: and ending their tasks); returns how many. */
static int remove_key(struct tgt_task *t, uint64_t sark, int *keep, int abort)
{
    struct tgt_pr *pr = t->lun->pr;
    int removed = 0;

    for (int i = pr->nregs - 1; i >= 0; i--) {
        if (i == *keep || (sark != 0 && pr->regs[i].key != sark))
            continue;
        notify_nexus(t, &pr->regs[i], ASC_REGISTRATIONS_PREEMPTED, abort);
        if (*keep == pr->nregs - 1)
            *keep = i;   /* remove_reg() moves the last entry to i */
        remove_reg(pr, i);
        removed++;
    }
    return removed;
}

static void out_preempt(struct tgt_task *t, int reg, uint8_t type, uint64_t sark, int abort)
{
    struct tgt_pr *pr = t->lun->pr;
    int take;

    if (!pr->reserved && sark == 0) {
        scsi_complete_sense(t, KEY_ILLEGAL, ASC_INVALID_FIELD_PARAM);
        return;
    }
    /* Preempting the reservation: its holder's key, or 0 against an
     * all-registrants reservation (which then removes everyone else). */
    take = pr->reserved && (all_registrants(pr->type) ? sark == 0
                                                       : pr->regs[pr->holder].key == sark);
    if (take && !type_valid(type)) {
        scsi_complete_sense(t, KEY_ILLEGAL, ASC_INVALID_FIELD_CDB);
        return;
    }
    if (take) {
        pr->reserved = 0;
        pr->holder = -1;
    }
    if (remove_key(t, sark, &reg, abort) == 0 && !take) {
        scsi_complete_status(t, ST_CONFLICT);
        return;
    }
    if (take) {
        pr->reserved = 1;
        pr->type = type;
        pr->holder = all_registrants(type) ? -1 : reg;
    }
    pr->generation++;
    scsi_complete_status(t, ST_GOOD);
}

void scsi_pr_exec_out(struct tgt_task *t)
{
    struct tgt_lun *l = t->lun;
    uint8_t sa = t->cdb[1] & 0x1f, scope = t->cdb[2] >> 4, type = t->cdb[2] & 0x0f;
    uint64_t key, sark;
    int reg;

    if ((t->xfer < t->edtl ? t->xfer : t->edtl) < PR_OUT_PARAM_LEN) {
        scsi_complete_sense(t, KEY_ILLEGAL, ASC_PARAM_LIST_LENGTH);
        return;
    }
    key = get_be64(t->buf);
    sark = get_be64(t->buf + 8);
    if (t->buf[20] & 0x01) {   /* APTPL: we do not persist across restarts */
        scsi_complete_sense(t, KEY_ILLEGAL, ASC_INVALID_FIELD_PARAM);
        return;
    }
    if (pr_get(l) < 0) {
        scsi_complete_sense(t, KEY_ABORTED, ASC_INSUFFICIENT_RESOURCES);
        return;
    }
    reg = nexus_of(l->pr, t->conn);
    if (sa == PRO_REGISTER || sa == PRO_REGISTER_IGNORE) {
        out_register(t, reg, key, sark, sa == PRO_REGISTER_IGNORE);
        return;
    }
    if (reg < 0 || l->pr->regs[reg].key != key) {
        scsi_complete_status(t, ST_CONFLICT);
        return;
    }
    if (sa != PRO_CLEAR && (scope != 0 || (sa != PRO_PREEMPT && sa != PRO_PREEMPT_ABORT &&
                                           !type_valid(type)))) {
        scsi_complete_sense(t, KEY_ILLEGAL, ASC_INVALID_FIELD_CDB);
        return;
    }
    switch (sa) {
    case PRO_RESERVE:
        out_reserve(t, reg, type);
        break;
    case PRO_RELEASE:
        out_release(t, reg, type);
        break;
    case PRO_CLEAR:
        notify_registrants(t, ASC_RESERVATIONS_PREEMPTED);
        l->pr->nregs = 0;
        l->pr->reserved = 0;
        l->pr->holder = -1;
        l->pr->generation++;
        scsi_complete_status(t, ST_GOOD);
        break;
    default:
        out_preempt(t, reg, type, sark, sa == PRO_PREEMPT_ABORT);
        break;
    }
}
