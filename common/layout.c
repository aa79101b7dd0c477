#include "common/layout.h"

void stripe_map(const struct stripe_layout *l, uint64_t off, struct stripe_pos *out)
{
    uint64_t unit_no = off / l->unit;
    uint64_t in_unit = off % l->unit;

    out->dfile = (uint32_t)(unit_no % l->factor);
    out->server = (l->first_server + out->dfile) % l->nio;
    out->df_offset = (unit_no / l->factor) * l->unit + in_unit;
    out->run = l->unit - in_unit;
}

uint64_t stripe_unmap(const struct stripe_layout *l, uint32_t dfile, uint64_t df_offset)
{
    uint64_t row = df_offset / l->unit;

    return (row * l->factor + dfile) * l->unit + df_offset % l->unit;
}

uint64_t stripe_dfile_size(const struct stripe_layout *l, uint32_t dfile, uint64_t file_size)
{
    uint64_t full_rows, tail, start;

    if (file_size == 0)
        return 0;
    full_rows = file_size / (l->unit * l->factor);
    tail = file_size % (l->unit * l->factor);
    start = (uint64_t)dfile * l->unit;  /* where this datafile's unit begins in the row */
    if (tail <= start)
        tail = 0;
    else if (tail - start > l->unit)
        tail = l->unit;
    else
        tail -= start;
    return full_rows * l->unit + tail;
}

uint64_t stripe_file_size(const struct stripe_layout *l, uint32_t dfile, uint64_t df_size)
{
    return df_size ? stripe_unmap(l, dfile, df_size - 1) + 1 : 0;
}
