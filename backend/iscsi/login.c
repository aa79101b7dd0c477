/* Login phase, operational key negotiation, CHAP and text requests
 * (RFC 7143 sections 6, 11.12, 11.10 and 13; CHAP per RFC 1994).
 *
 * Login stages of one connection (struct tgt_login.csg):
 *
 *   SECURITY (0) --T=1, NSG=1, auth done--> OPERATIONAL (1)
 *   SECURITY (0) --T=1, NSG=3, auth done--> FULL FEATURE (conn CONN_FULL)
 *   OPERATIONAL (1) --T=1, NSG=3----------> FULL FEATURE
 *   any --error (bad key, failed auth, unknown target)--> reject sent,
 *         connection CONN_LOGOUT, closed once the reject is written.
 *
 * CHAP inside SECURITY (chap_state):
 *   NONE --AuthMethod=CHAP agreed--> OFFERED --CHAP_A=5--> CHALLENGED
 *   CHALLENGED --CHAP_N/CHAP_R verify (and mutual reply)--> DONE
 * The login state is owned by the connection and freed when the
 * connection reaches full feature phase or closes.
 */
#include "config.h"

#include "backend/iscsi/tgt.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>

#include "common/log.h"

#define KEY_MAX 63
#define VALUE_MAX 1024

enum chap_state { CHAP_NONE, CHAP_OFFERED, CHAP_CHALLENGED, CHAP_DONE };

struct tgt_login {
    int started;
    int csg;
    int session_known;      /* SessionType seen or defaulted */
    int auth_agreed;        /* AuthMethod negotiated (CHAP or None) */
    enum chap_state chap;
    uint8_t chap_id;
    uint8_t chap_c[16];
    int mrdsl_declared;
    int tpgt_sent;
    char *req;              /* text carried over by the C bit */
    size_t req_len;
    char rsp[TGT_LOGIN_MAX_DSL];
    size_t rsp_len;
    int overflow;
    uint16_t status;        /* login status to answer with, 0 = success */
};

static void login_free(struct tgt_conn *c)
{
    if (!c->login)
        return;
    free(c->login->req);
    free(c->login);
    c->login = NULL;
}

static void rsp_add(struct tgt_login *l, const char *key, const char *value)
{
    int n = snprintf(l->rsp + l->rsp_len, sizeof(l->rsp) - l->rsp_len, "%s=%s", key, value);

    if (n < 0 || (size_t)n + 1 > sizeof(l->rsp) - l->rsp_len) {
        l->overflow = 1;
        return;
    }
    l->rsp_len += (size_t)n + 1;
}

static void rsp_addu(struct tgt_login *l, const char *key, uint32_t v)
{
    char buf[16];

    snprintf(buf, sizeof(buf), "%u", v);
    rsp_add(l, key, buf);
}

/* Parses a decimal (or 0x hex) number; -1 when malformed. */
static int parse_num(const char *v, uint32_t lo, uint32_t hi, uint32_t *out)
{
    char *end;
    unsigned long long n;

    if (!*v || !isdigit((unsigned char)*v))
        return -1;
    errno = 0;
    n = strtoull(v, &end, 0);
    if (errno || *end || n < lo || n > hi)
        return -1;
    *out = (uint32_t)n;
    return 0;
}

static int parse_bool(const char *v, int *out)
{
    if (strcmp(v, "Yes") == 0)
        *out = 1;
    else if (strcmp(v, "No") == 0)
        *out = 0;
    else
        return -1;
    return 0;
}

static int list_has(const char *list, const char *item)
{
    size_t n = strlen(item);

    for (const char *p = list; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == n && strncmp(p, item, n) == 0)
            return 1;
        p += len + (comma ? 1 : 0);
    }
    return 0;
}

static int hex_decode(const char *s, uint8_t *out, size_t cap, size_t *len)
{
    size_t n = 0;

    if (strncmp(s, "0x", 2) != 0 && strncmp(s, "0X", 2) != 0)
        return -1;
    s += 2;
    if (strlen(s) % 2)
        return -1;
    for (; *s; s += 2) {
        unsigned v;
        if (n >= cap || !isxdigit((unsigned char)s[0]) || !isxdigit((unsigned char)s[1]) ||
            sscanf(s, "%2x", &v) != 1)
            return -1;
        out[n++] = (uint8_t)v;
    }
    *len = n;
    return 0;
}

static void hex_encode(const uint8_t *p, size_t n, char *out)
{
    out[0] = '0';
    out[1] = 'x';
    for (size_t i = 0; i < n; i++)
        snprintf(out + 2 + 2 * i, 3, "%02x", p[i]);
}

/* ---- key handlers ---- */

struct keyctx {
    struct tgt_conn *c;
    struct tgt_login *l;
    int in_login;
    /* CHAP values gathered from one PDU */
    const char *chap_n, *chap_r, *chap_i, *chap_c;
};

static int digest_key(struct keyctx *k, const char *key, const char *v, int *out)
{
    if (list_has(v, "CRC32C") && (!list_has(v, "None") || strncmp(v, "CRC32C", 6) == 0)) {
        *out = 1;
        rsp_add(k->l, key, "CRC32C");
    } else if (list_has(v, "None")) {
        *out = 0;
        rsp_add(k->l, key, "None");
    } else {
        rsp_add(k->l, key, "Reject");
    }
    return 0;
}

static int auth_key(struct keyctx *k, const char *v)
{
    struct tgt_server *srv = k->c->srv;
    const char *pick = NULL;

    if (k->l->csg != ISCSI_STAGE_SECURITY)
        return LOGIN_ERR_INITIATOR;
    if (srv->auth.user)
        pick = list_has(v, "CHAP") ? "CHAP" : NULL;
    else
        pick = list_has(v, "None") ? "None" : NULL;
    rsp_add(k->l, "AuthMethod", pick ? pick : "Reject");
    if (!pick)
        return srv->auth.user ? LOGIN_ERR_AUTH_FAILED : LOGIN_ERR_INITIATOR;
    k->l->auth_agreed = 1;
    k->l->chap = srv->auth.user ? CHAP_OFFERED : CHAP_DONE;
    return 0;
}

static int chap_a_key(struct keyctx *k, const char *v)
{
    struct tgt_login *l = k->l;
    char hex[2 + 2 * sizeof(l->chap_c) + 1];

    if (l->chap != CHAP_OFFERED)
        return LOGIN_ERR_INITIATOR;
    if (!list_has(v, "5")) {
        rsp_add(l, "CHAP_A", "Reject");
        return LOGIN_ERR_AUTH_FAILED;
    }
    if (getrandom(l->chap_c, sizeof(l->chap_c), 0) != (ssize_t)sizeof(l->chap_c) ||
        getrandom(&l->chap_id, 1, 0) != 1)
        return LOGIN_ERR_TARGET;
    hex_encode(l->chap_c, sizeof(l->chap_c), hex);
    rsp_add(l, "CHAP_A", "5");
    rsp_addu(l, "CHAP_I", l->chap_id);
    rsp_add(l, "CHAP_C", hex);
    l->chap = CHAP_CHALLENGED;
    return 0;
}

/* Checks the initiator's answer and, for mutual CHAP, answers its
 * challenge.  Returns 0 or a login status. */
static int chap_verify(struct keyctx *k)
{
    struct tgt_login *l = k->l;
    const struct tgt_auth *a = &k->c->srv->auth;
    uint8_t got[64], want[16], ichal[512];
    size_t glen, clen;
    uint32_t iid;
    char hex[2 + 32 + 1];

    if (l->chap != CHAP_CHALLENGED || !k->chap_n || !k->chap_r)
        return LOGIN_ERR_AUTH_FAILED;
    if (strcmp(k->chap_n, a->user) != 0 || hex_decode(k->chap_r, got, sizeof(got), &glen) < 0 ||
        glen != 16) {
        log_warn("target: %s: CHAP: unknown name or malformed response", k->c->peer);
        return LOGIN_ERR_AUTH_FAILED;
    }
    if (!tgt_chap_check(l->chap_id, a->secret, l->chap_c, sizeof(l->chap_c), got)) {
        log_warn("target: %s: CHAP: wrong response for user %s", k->c->peer, a->user);
        return LOGIN_ERR_AUTH_FAILED;
    }
    if (!k->chap_i && !k->chap_c) {
        if (a->mutual_user) {
            log_warn("target: %s: CHAP: mutual authentication required", k->c->peer);
            return LOGIN_ERR_AUTH_FAILED;
        }
        l->chap = CHAP_DONE;
        return 0;
    }
    if (!a->mutual_user || !k->chap_i || !k->chap_c ||
        parse_num(k->chap_i, 0, 255, &iid) < 0 ||
        hex_decode(k->chap_c, ichal, sizeof(ichal), &clen) < 0 || clen == 0 ||
        (clen == sizeof(l->chap_c) && memcmp(ichal, l->chap_c, clen) == 0)) {
        log_warn("target: %s: CHAP: mutual challenge refused", k->c->peer);
        return LOGIN_ERR_AUTH_FAILED;
    }
    tgt_chap_response((uint8_t)iid, a->mutual_secret, ichal, clen, want);
    hex_encode(want, 16, hex);
    rsp_add(l, "CHAP_N", a->mutual_user);
    rsp_add(l, "CHAP_R", hex);
    l->chap = CHAP_DONE;
    return 0;
}

/* Operational keys shared by login and text negotiation; returns 0, a
 * login status, or 1 when the key is not an operational one. */
static int op_key(struct keyctx *k, const char *key, const char *v)
{
    struct tgt_params *p = &k->c->p;
    struct tgt_login *l = k->l;
    int session_only = strcmp(key, "MaxBurstLength") == 0 || strcmp(key, "FirstBurstLength") == 0 ||
                       strcmp(key, "ImmediateData") == 0 || strcmp(key, "InitialR2T") == 0 ||
                       strcmp(key, "MaxOutstandingR2T") == 0 ||
                       strcmp(key, "DataPDUInOrder") == 0 ||
                       strcmp(key, "DataSequenceInOrder") == 0 ||
                       strcmp(key, "MaxConnections") == 0 ||
                       strcmp(key, "DefaultTime2Wait") == 0 ||
                       strcmp(key, "DefaultTime2Retain") == 0;
    uint32_t n;
    int b;

    if (session_only && k->c->discovery) {
        rsp_add(l, key, "Irrelevant");
        return 0;
    }
    if (strcmp(key, "HeaderDigest") == 0)
        return digest_key(k, key, v, &p->header_digest);
    if (strcmp(key, "DataDigest") == 0)
        return digest_key(k, key, v, &p->data_digest);
    if (strcmp(key, "MaxRecvDataSegmentLength") == 0) {
        if (parse_num(v, 512, 16777215, &n) < 0)
            return LOGIN_ERR_INITIATOR;
        p->peer_mrdsl = n;
        if (!l->mrdsl_declared)
            rsp_addu(l, key, TGT_MAX_RECV_DSL);
        l->mrdsl_declared = 1;
        return 0;
    }
    if (strcmp(key, "MaxBurstLength") == 0 || strcmp(key, "FirstBurstLength") == 0) {
        if (parse_num(v, 512, 16777215, &n) < 0)
            return LOGIN_ERR_INITIATOR;
        if (n > TGT_MAX_BURST)
            n = TGT_MAX_BURST;
        if (key[0] == 'M')
            p->max_burst = n;
        else
            p->first_burst = n;
        rsp_addu(l, key, n);
        return 0;
    }
    if (strcmp(key, "ImmediateData") == 0 || strcmp(key, "InitialR2T") == 0) {
        if (parse_bool(v, &b) < 0)
            return LOGIN_ERR_INITIATOR;
        /* ImmediateData is AND with our Yes, InitialR2T OR with our No:
         * both results are the initiator's value. */
        if (key[0] == 'I' && key[1] == 'm')
            p->immediate_data = b;
        else
            p->initial_r2t = b;
        rsp_add(l, key, b ? "Yes" : "No");
        return 0;
    }
    if (strcmp(key, "MaxOutstandingR2T") == 0) {
        if (parse_num(v, 1, 65535, &n) < 0)
            return LOGIN_ERR_INITIATOR;
        p->max_r2t = n < TGT_MAX_OUT_R2T ? n : TGT_MAX_OUT_R2T;
        rsp_addu(l, key, p->max_r2t);
        return 0;
    }
    if (strcmp(key, "DataPDUInOrder") == 0 || strcmp(key, "DataSequenceInOrder") == 0) {
        if (parse_bool(v, &b) < 0)
            return LOGIN_ERR_INITIATOR;
        rsp_add(l, key, "Yes");   /* OR with our Yes */
        return 0;
    }
    if (strcmp(key, "ErrorRecoveryLevel") == 0) {
        if (parse_num(v, 0, 2, &n) < 0)
            return LOGIN_ERR_INITIATOR;
        rsp_add(l, key, "0");
        return 0;
    }
    if (strcmp(key, "MaxConnections") == 0) {
        if (parse_num(v, 1, 65535, &n) < 0)
            return LOGIN_ERR_INITIATOR;
        rsp_add(l, key, "1");
        return 0;
    }
    if (strcmp(key, "DefaultTime2Wait") == 0 || strcmp(key, "DefaultTime2Retain") == 0) {
        if (parse_num(v, 0, 3600, &n) < 0)
            return LOGIN_ERR_INITIATOR;
        if (key[15] == 'W')
            rsp_addu(l, key, n > 2 ? n : 2);
        else
            rsp_addu(l, key, n < 20 ? n : 20);
        return 0;
    }
    if (strcmp(key, "IFMarker") == 0 || strcmp(key, "OFMarker") == 0) {
        rsp_add(l, key, "No");
        return 0;
    }
    if (strcmp(key, "IFMarkInt") == 0 || strcmp(key, "OFMarkInt") == 0) {
        rsp_add(l, key, "Irrelevant");
        return 0;
    }
    return 1;
}

static int login_key(struct keyctx *k, const char *key, const char *v)
{
    struct tgt_conn *c = k->c;
    struct tgt_login *l = k->l;
    int rc;

    if (strcmp(key, "InitiatorName") == 0) {
        if (!*v || strlen(v) >= sizeof(c->initiator))
            return LOGIN_ERR_INITIATOR;
        snprintf(c->initiator, sizeof(c->initiator), "%s", v);
        return 0;
    }
    if (strcmp(key, "SessionType") == 0) {
        if (strcmp(v, "Discovery") == 0)
            c->discovery = 1;
        else if (strcmp(v, "Normal") == 0)
            c->discovery = 0;
        else
            return LOGIN_ERR_INITIATOR;
        l->session_known = 1;
        return 0;
    }
    if (strcmp(key, "TargetName") == 0) {
        if (strcmp(v, c->srv->iqn) != 0) {
            log_warn("target: %s: login to unknown target %s", c->peer, v);
            return LOGIN_ERR_NOT_FOUND;
        }
        return 0;
    }
    if (strcmp(key, "InitiatorAlias") == 0)
        return 0;
    if (strcmp(key, "AuthMethod") == 0)
        return auth_key(k, v);
    if (strcmp(key, "CHAP_A") == 0)
        return chap_a_key(k, v);
    if (strcmp(key, "CHAP_N") == 0 || strcmp(key, "CHAP_R") == 0 || strcmp(key, "CHAP_I") == 0 ||
        strcmp(key, "CHAP_C") == 0) {
        const char **slot = key[5] == 'N' ? &k->chap_n : key[5] == 'R' ? &k->chap_r
                            : key[5] == 'I' ? &k->chap_i : &k->chap_c;
        *slot = v;
        return 0;
    }
    rc = op_key(k, key, v);
    if (rc != 1)
        return rc;
    rsp_add(l, key, "NotUnderstood");
    return 0;
}

/* Walks NUL-separated key=value pairs; fn returns 0 or a login status. */
static int parse_keys(struct keyctx *k, char *text, size_t len,
                      int (*fn)(struct keyctx *, const char *, const char *))
{
    size_t pos = 0;

    while (pos < len) {
        char *kv = text + pos, *eq;
        size_t n = strnlen(kv, len - pos);
        int rc;

        pos += n + 1;
        if (n == 0)
            continue;
        if (kv + n == text + len)   /* last pair not NUL-terminated */
            return LOGIN_ERR_INITIATOR;
        eq = strchr(kv, '=');
        if (!eq || eq == kv || eq - kv > KEY_MAX || strlen(eq + 1) > VALUE_MAX)
            return LOGIN_ERR_INITIATOR;
        *eq = '\0';
        rc = fn(k, kv, eq + 1);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- login PDUs ---- */

static int send_login_rsp(struct tgt_conn *c, const uint8_t *req, uint8_t flags, uint16_t status)
{
    struct tgt_login *l = c->login;
    uint8_t h[ISCSI_BHS_LEN] = { 0 };
    int rc;

    h[0] = ISCSI_OP_LOGIN_RSP;
    h[1] = flags;
    memcpy(h + 8, req + 8, 6);  /* ISID */
    if ((flags & ISCSI_FLAG_LOGIN_TRANSIT) && (flags & 3) == ISCSI_STAGE_FULL && status == 0)
        put_be16(h + 14, c->tsih);
    put_be32(h + 16, bhs_itt(req));
    tgt_conn_fill_sn(c, h, 1);
    h[36] = (uint8_t)(status >> 8);
    h[37] = (uint8_t)status;
    rc = tgt_conn_queue(c, h, l->rsp, status ? 0 : (uint32_t)l->rsp_len, NULL, 1);
    l->rsp_len = 0;
    return rc;
}

static int login_reject(struct tgt_conn *c, const uint8_t *req, uint16_t status)
{
    int rc;

    log_warn("target: %s (%s): login rejected with status 0x%04x", c->peer,
             c->initiator[0] ? c->initiator : "unnamed", status);
    rc = send_login_rsp(c, req, (uint8_t)(c->login->csg << 2), status);
    if (rc < 0)
        return rc;
    if (c->tx_tail)
        c->tx_tail->close_after = 1;
    c->state = CONN_LOGOUT;
    return 0;
}

static int login_first(struct tgt_conn *c, const uint8_t *h)
{
    struct tgt_login *l = c->login;
    uint16_t tsih = get_be16(h + 14);

    l->started = 1;
    memcpy(c->isid, h + 8, 6);
    c->cid = get_be16(h + 20);
    c->exp_cmdsn = get_be32(h + 24);
    c->max_cmdsn = c->exp_cmdsn + TGT_CMD_WINDOW - 1;
    c->stat_sn = get_be32(h + 28);
    if (h[3] > 0)   /* Version-min above what we speak */
        return LOGIN_ERR_UNSUPPORTED_VERSION;
    if (tsih != 0) {
        for (struct tgt_conn *o = c->srv->conns; o; o = o->next)
            if (o != c && o->state == CONN_FULL && o->tsih == tsih)
                return LOGIN_ERR_TOO_MANY_CONN;
        return LOGIN_ERR_NO_SESSION;
    }
    return 0;
}

/* Ends an older session of the same initiator and ISID (RFC 7143 6.3.5). */
static void reinstate(struct tgt_conn *c)
{
    struct tgt_conn *o, *next;

    for (o = c->srv->conns; o; o = next) {
        next = o->next;
        if (o != c && o->state == CONN_FULL && !o->discovery &&
            memcmp(o->isid, c->isid, 6) == 0 && strcmp(o->initiator, c->initiator) == 0)
            tgt_conn_close(o, "session reinstated by a new login");
    }
}

static int login_finish(struct tgt_conn *c)
{
    struct tgt_server *srv = c->srv;

    if (!c->initiator[0])
        return LOGIN_ERR_MISSING_PARAM;
    if (c->p.first_burst > c->p.max_burst)
        c->p.first_burst = c->p.max_burst;
    if (++srv->next_tsih == 0)
        srv->next_tsih = 1;
    c->tsih = srv->next_tsih;
    if (!c->discovery)
        reinstate(c);
    return 0;
}

/* Text of this PDU, joined to text carried by earlier C-bit PDUs. */
static int login_text(struct tgt_login *l, const uint8_t *data, uint32_t dlen, char **text,
                      size_t *len)
{
    char *p;

    if (l->req_len + dlen > TGT_MAX_TEXT)
        return LOGIN_ERR_INITIATOR;
    p = realloc(l->req, l->req_len + dlen + 1);
    if (!p)
        return LOGIN_ERR_NO_RESOURCES;
    if (dlen)
        memcpy(p + l->req_len, data, dlen);
    l->req = p;
    l->req_len += dlen;
    p[l->req_len] = '\0';
    *text = p;
    *len = l->req_len;
    return 0;
}

static int login_stage(struct tgt_conn *c, const uint8_t *h, int *transit, int *nsg)
{
    struct tgt_login *l = c->login;
    int t = (h[1] & ISCSI_FLAG_LOGIN_TRANSIT) != 0;
    int want = h[1] & 3;
    int auth_needed = c->srv->auth.user != NULL && (!c->discovery || c->srv->auth.discovery);

    *transit = 0;
    *nsg = 0;
    if (auth_needed && l->chap != CHAP_DONE) {
        if (l->csg != ISCSI_STAGE_SECURITY || (t && l->chap == CHAP_NONE))
            return LOGIN_ERR_AUTH_FAILED;
        return 0;   /* CHAP exchange continues */
    }
    if (!t)
        return 0;
    if (want <= l->csg || want == 2)
        return LOGIN_ERR_INITIATOR;
    *transit = 1;
    *nsg = want;
    return 0;
}

int tgt_login_pdu(struct tgt_conn *c, const uint8_t *h, const uint8_t *data, uint32_t dlen)
{
    struct tgt_login *l = c->login;
    struct keyctx k = { .c = c, .in_login = 1 };
    int csg = (h[1] >> 2) & 3, transit, nsg, rc;
    char *text;
    size_t len;

    if (!l) {
        l = c->login = calloc(1, sizeof(*l));
        if (!l)
            return -ENOMEM;
        c->login_free = login_free;
    }
    k.l = l;
    l->csg = csg;
    if (!l->started && (rc = login_first(c, h)) != 0)
        return login_reject(c, h, (uint16_t)rc);
    if (csg == 2 || csg == ISCSI_STAGE_FULL)
        return login_reject(c, h, LOGIN_ERR_INITIATOR);
    rc = login_text(l, data, dlen, &text, &len);
    if (rc)
        return login_reject(c, h, (uint16_t)rc);
    if (h[1] & ISCSI_FLAG_LOGIN_CONTINUE)
        return send_login_rsp(c, h, (uint8_t)(csg << 2), 0);
    l->req_len = 0;
    rc = parse_keys(&k, text, len, login_key);
    if (rc == 0 && (k.chap_n || k.chap_r))
        rc = chap_verify(&k);
    if (rc == 0 && !c->discovery && !l->tpgt_sent) {
        rsp_add(l, "TargetPortalGroupTag", "1");
        l->tpgt_sent = 1;
    }
    if (rc == 0)
        rc = login_stage(c, h, &transit, &nsg);
    if (rc == 0 && l->overflow)
        rc = LOGIN_ERR_TARGET;
    if (rc == 0 && transit && nsg == ISCSI_STAGE_FULL)
        rc = login_finish(c);
    if (rc)
        return login_reject(c, h, (uint16_t)rc);
    rc = send_login_rsp(c, h,
                        (uint8_t)((transit ? ISCSI_FLAG_LOGIN_TRANSIT : 0) | csg << 2 | nsg), 0);
    if (rc < 0)
        return rc;
    if (transit && nsg == ISCSI_STAGE_FULL) {
        c->state = CONN_FULL;
        c->digests_on = 1;   /* from the first PDU after the final login response */
        log_info("target: %s: %s session for %s (TSIH %u, digests %s/%s)", c->peer,
                 c->discovery ? "discovery" : "normal", c->initiator, c->tsih,
                 c->p.header_digest ? "CRC32C" : "None", c->p.data_digest ? "CRC32C" : "None");
        login_free(c);
    }
    return 0;
}

/* ---- text requests (SendTargets) ---- */

void tgt_conn_local_addr(const struct tgt_conn *c, char *buf, size_t len)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    char host[64];

    if (c->fd >= 0 && getsockname(c->fd, (struct sockaddr *)&ss, &sl) == 0) {
        if (ss.ss_family == AF_INET6) {
            struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
            inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
            snprintf(buf, len, "[%s]:%u", host, ntohs(s6->sin6_port));
            return;
        }
        if (ss.ss_family == AF_INET) {
            struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
            inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
            snprintf(buf, len, "%s:%u", host, ntohs(s4->sin_port));
            return;
        }
    }
    snprintf(buf, len, "%s:%u", c->srv->portal_host, c->srv->port);
}

static int text_key(struct keyctx *k, const char *key, const char *v)
{
    char addr[96];
    int rc;

    if (strcmp(key, "SendTargets") == 0) {
        int ours = strcmp(v, "All") == 0 || strcmp(v, k->c->srv->iqn) == 0 ||
                   (!*v && !k->c->discovery);
        if (!ours)
            return 0;
        tgt_conn_local_addr(k->c, addr, sizeof(addr));
        strncat(addr, ",1", sizeof(addr) - strlen(addr) - 1);
        rsp_add(k->l, "TargetName", k->c->srv->iqn);
        rsp_add(k->l, "TargetAddress", addr);
        return 0;
    }
    rc = op_key(k, key, v);
    if (rc != 1)
        return rc;
    rsp_add(k->l, key, "NotUnderstood");
    return 0;
}

int tgt_text_pdu(struct tgt_conn *c, const uint8_t *h, const uint8_t *data, uint32_t dlen)
{
    struct tgt_login *l = calloc(1, sizeof(*l));
    struct keyctx k = { .c = c, .l = l };
    uint8_t r[ISCSI_BHS_LEN] = { 0 };
    char *text;
    int rc;

    if (!l)
        return -ENOMEM;
    /* Already negotiated: do not declare MaxRecvDataSegmentLength again
     * unless asked. */
    l->mrdsl_declared = 0;
    l->csg = ISCSI_STAGE_FULL;
    text = malloc(dlen + 1);
    if (!text) {
        free(l);
        return -ENOMEM;
    }
    if (dlen)
        memcpy(text, data, dlen);
    text[dlen] = '\0';
    rc = parse_keys(&k, text, dlen, text_key);
    free(text);
    r[0] = ISCSI_OP_TEXT_RSP;
    r[1] = ISCSI_FLAG_FINAL;
    put_be32(r + 16, bhs_itt(h));
    put_be32(r + 20, ISCSI_RSVD_TAG);
    tgt_conn_fill_sn(c, r, 1);
    if (rc != 0 || l->overflow) {
        free(l);
        return -EPROTO;
    }
    rc = tgt_conn_queue(c, r, l->rsp, (uint32_t)l->rsp_len, NULL, 1);
    free(l);
    return rc;
}
