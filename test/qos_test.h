/* What the QoS scheduler's unit tests share (test_qos.c: orders, classes,
 * credit, SLO files; test_qos_depth.c: the EDF depth controller): one
 * scheduler and request table per test program, and the helpers that add
 * a class, submit a request and start what the scheduler lets start. */
#ifndef IPVFS_TEST_QOS_TEST_H
#define IPVFS_TEST_QOS_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/server/qos.h"

#define MB 1000000u
#define MS 1000u   /* microseconds */

static struct qos_sched sched;    /* large: not on the stack */
static struct qos_req reqs[4096];

static inline uint32_t add_class(struct qos_sched *s, const char *name, double rate, double lat)
{
    char msg[200];

    assert_int_equal(qos_set(s, name, rate, lat, msg, sizeof(msg)), 0);
    return qos_lookup(s, name, strlen(name));
}

static inline struct qos_req *submit(struct qos_sched *s, int i, uint32_t cls, uint64_t bytes,
                              uint64_t now)
{
    reqs[i] = (struct qos_req){ .cls = cls, .bytes = bytes };
    qos_submit(s, &reqs[i], now);
    return &reqs[i];
}

/* Dispatches what the scheduler lets start now, writing the classes' names'
 * first letters into out; returns how many. */
static inline int drain(struct qos_sched *s, uint64_t now, char *out, struct qos_req **started)
{
    struct qos_req *r;
    int n = 0;

    while ((r = qos_next(s, now))) {
        out[n] = s->cls[r->cls].name[0];
        if (started)
            started[n] = r;
        n++;
    }
    out[n] = 0;
    return n;
}

#endif
