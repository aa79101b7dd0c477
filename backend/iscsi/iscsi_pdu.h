/* iSCSI wire format (RFC 7143): opcodes, flag bits, field offsets of the
 * 48-byte Basic Header Segment, and big-endian accessors.  Pure facts of
 * the protocol; no state lives here. */
#ifndef IPVFS_TGT_ISCSI_PDU_H
#define IPVFS_TGT_ISCSI_PDU_H

#include <stdint.h>
#include <string.h>

#define ISCSI_BHS_LEN 48
#define ISCSI_DIGEST_LEN 4

/* Initiator opcodes */
#define ISCSI_OP_NOP_OUT     0x00
#define ISCSI_OP_SCSI_CMD    0x01
#define ISCSI_OP_TMF_REQ     0x02
#define ISCSI_OP_LOGIN_REQ   0x03
#define ISCSI_OP_TEXT_REQ    0x04
#define ISCSI_OP_DATA_OUT    0x05
#define ISCSI_OP_LOGOUT_REQ  0x06
#define ISCSI_OP_SNACK_REQ   0x10
/* Target opcodes */
#define ISCSI_OP_NOP_IN      0x20
#define ISCSI_OP_SCSI_RSP    0x21
#define ISCSI_OP_TMF_RSP     0x22
#define ISCSI_OP_LOGIN_RSP   0x23
#define ISCSI_OP_TEXT_RSP    0x24
#define ISCSI_OP_DATA_IN     0x25
#define ISCSI_OP_LOGOUT_RSP  0x26
#define ISCSI_OP_R2T         0x31
#define ISCSI_OP_ASYNC_MSG   0x32
#define ISCSI_OP_REJECT      0x3f

#define ISCSI_OP_MASK        0x3f
#define ISCSI_OP_IMMEDIATE   0x40

/* byte 1 flags */
#define ISCSI_FLAG_FINAL     0x80
#define ISCSI_FLAG_CMD_READ  0x40
#define ISCSI_FLAG_CMD_WRITE 0x20
#define ISCSI_FLAG_LOGIN_TRANSIT  0x80
#define ISCSI_FLAG_LOGIN_CONTINUE 0x40
#define ISCSI_FLAG_TEXT_CONTINUE  0x40
#define ISCSI_FLAG_DATA_ACK       0x40
#define ISCSI_FLAG_RES_OVERFLOW   0x04
#define ISCSI_FLAG_RES_UNDERFLOW  0x02
#define ISCSI_FLAG_DATA_STATUS    0x01

/* Reject reasons */
#define ISCSI_REJECT_DATA_DIGEST    0x02
#define ISCSI_REJECT_SNACK          0x03
#define ISCSI_REJECT_PROTOCOL_ERROR 0x04
#define ISCSI_REJECT_CMD_NOT_SUPPORTED 0x05
#define ISCSI_REJECT_INVALID_PDU_FIELD 0x09

/* Login status class/detail (high byte class, low byte detail) */
#define LOGIN_OK                 0x0000
#define LOGIN_ERR_INITIATOR      0x0200
#define LOGIN_ERR_AUTH_FAILED    0x0201
#define LOGIN_ERR_FORBIDDEN      0x0202
#define LOGIN_ERR_NOT_FOUND      0x0203
#define LOGIN_ERR_REMOVED        0x0204
#define LOGIN_ERR_UNSUPPORTED_VERSION 0x0205
#define LOGIN_ERR_TOO_MANY_CONN  0x0206
#define LOGIN_ERR_MISSING_PARAM  0x0207
#define LOGIN_ERR_NO_SESSION     0x020a
#define LOGIN_ERR_INVALID_REQ    0x020b
#define LOGIN_ERR_TARGET         0x0300
#define LOGIN_ERR_NO_RESOURCES   0x0302

/* Login stages */
#define ISCSI_STAGE_SECURITY    0
#define ISCSI_STAGE_OPERATIONAL 1
#define ISCSI_STAGE_FULL        3

/* Task management functions and responses */
#define ISCSI_TMF_ABORT_TASK        1
#define ISCSI_TMF_ABORT_TASK_SET    2
#define ISCSI_TMF_CLEAR_ACA         3
#define ISCSI_TMF_CLEAR_TASK_SET    4
#define ISCSI_TMF_LUN_RESET         5
#define ISCSI_TMF_TARGET_WARM_RESET 6
#define ISCSI_TMF_TARGET_COLD_RESET 7
#define ISCSI_TMF_TASK_REASSIGN     8

#define ISCSI_TMF_RSP_COMPLETE        0
#define ISCSI_TMF_RSP_NO_TASK         1
#define ISCSI_TMF_RSP_NO_LUN          2
#define ISCSI_TMF_RSP_NOT_SUPPORTED   5
#define ISCSI_TMF_RSP_REJECTED        255

#define ISCSI_RSVD_TAG 0xffffffffu

static inline uint16_t get_be16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t get_be24(const uint8_t *p)
{
    return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static inline uint32_t get_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t get_be64(const uint8_t *p)
{
    return (uint64_t)get_be32(p) << 32 | get_be32(p + 4);
}

static inline void put_be16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static inline void put_be24(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 16);
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)v;
}

static inline void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static inline void put_be64(uint8_t *p, uint64_t v)
{
    put_be32(p, (uint32_t)(v >> 32));
    put_be32(p + 4, (uint32_t)v);
}

/* BHS field accessors (offsets from RFC 7143 section 11) */
static inline uint8_t bhs_opcode(const uint8_t *h) { return h[0] & ISCSI_OP_MASK; }
static inline int bhs_immediate(const uint8_t *h) { return (h[0] & ISCSI_OP_IMMEDIATE) != 0; }
static inline uint32_t bhs_ahs_len(const uint8_t *h) { return (uint32_t)h[4] * 4; }
static inline uint32_t bhs_data_len(const uint8_t *h) { return get_be24(h + 5); }
static inline uint32_t bhs_itt(const uint8_t *h) { return get_be32(h + 16); }

/* Serial number arithmetic (RFC 1982, 32 bits) */
static inline int sn_lt(uint32_t a, uint32_t b)
{
    return a != b && (int32_t)(a - b) < 0;
}

static inline int sn_gt(uint32_t a, uint32_t b)
{
    return a != b && (int32_t)(a - b) > 0;
}

static inline uint32_t pad4(uint32_t n)
{
    return (4 - (n & 3)) & 3;
}

#endif
