/* The client's reconnect and resend decisions (the rules: retry.h). */
#include "adio/client/retry.h"

#include <errno.h>

#include "common/proto.h"

int retry_after_lost(int err)
{
    return err == ECONNRESET || err == EPIPE || err == ECONNABORTED;
}

int retry_reconnect_again(int err)
{
    /* ECONNREFUSED is missing on purpose: nobody holds the port */
    return retry_after_lost(err) || err == ETIMEDOUT;
}

int retry_request_again(uint16_t op, int once, int in_doubt)
{
    switch (op) {
    case IPVFS_OP_SHFP:
    case IPVFS_OP_LOCK:
    case IPVFS_OP_UNLOCK:
        return 0;
    case IPVFS_OP_READ:
    case IPVFS_OP_WRITE:
    case IPVFS_OP_DF_GETSIZE:
    case IPVFS_OP_DF_SYNC:
    case IPVFS_OP_DF_TRUNCATE:
    case IPVFS_OP_DF_PREALLOC:
    case IPVFS_OP_DF_REMOVE:
    case IPVFS_OP_ORPHANS:
    case IPVFS_OP_LOOKUP:
    case IPVFS_OP_STATUS:
    case IPVFS_OP_READDIR:
    case IPVFS_OP_GETATTR:
    case IPVFS_OP_SETATTR:
    case IPVFS_OP_HELLO:
    case IPVFS_OP_QOS_SET:      /* setting the same SLO twice is one setting */
    case IPVFS_OP_QOS_STATUS:
    case IPVFS_OP_CAP:          /* showing a capability twice is one showing */
        return !in_doubt || !once;
    default:
        return !in_doubt;
    }
}

int retry_delay_ms(unsigned attempt, int64_t elapsed_ms, int deadline_ms)
{
    int64_t delay = RETRY_FIRST_DELAY_MS;

    for (unsigned i = 0; i < attempt && delay < RETRY_MAX_DELAY_MS; i++)
        delay *= 2;
    if (delay > RETRY_MAX_DELAY_MS)
        delay = RETRY_MAX_DELAY_MS;
    if (elapsed_ms < 0)
        elapsed_ms = 0;
    if (elapsed_ms + delay > deadline_ms)
        return -1;
    return (int)delay;
}
