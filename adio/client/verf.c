/* Write verifiers (common/proto.h): what this process's writes to a file
 * have seen of each I/O node's incarnations since its last sync.  Pure
 * state changes; io.c and dfops.c feed them the replies. */
#include "adio/client/client_internal.h"

void verf_note_write(struct file_verf *s, uint64_t v)
{
    if (s->unsynced && s->verifier != v)
        s->changed = 1;
    s->verifier = v;
    s->unsynced = 1;
}

int verf_note_sync(struct file_verf *s, uint64_t v)
{
    int lost = s->unsynced && (s->changed || s->verifier != v);

    s->unsynced = 0;
    s->changed = 0;
    s->verifier = v;
    return lost;
}

int ipvfs_file_unsynced(const struct ipvfs_file *f)
{
    for (uint32_t i = 0; i < f->layout.factor; i++)
        if (f->verf[i].unsynced)
            return 1;
    return 0;
}

uint32_t client_dfile_of(const struct ipvfs_file *f, uint32_t server)
{
    return (server + f->layout.nio - f->layout.first_server) % f->layout.nio;
}
