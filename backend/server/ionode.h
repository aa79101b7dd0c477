/* The I/O node service (ionode.c): READ WRITE DF_* on the datafile store
 * over this node's iRAID volume. */
#ifndef IPVFS_SERVER_IONODE_H
#define IPVFS_SERVER_IONODE_H

#include "backend/server/srvconn.h"

extern const struct service ionode_service;

/* Logs in to the targets, opens the volume and the store; 0 or -errno. */
int ionode_open(struct server *srv);
/* Async local stop of the I/O node: syncs and closes the datafile store,
 * then the volume; calls done from the outermost loop level, exactly once. */
void ionode_stop(struct server *srv, void (*done)(struct server *srv, int status));
/* Synchronous close for teardown paths (nothing may be in flight); runs the
 * loop itself, so never from inside a store or volume callback. */
void ionode_close(struct server *srv);
/* The L1 cache's counters for STATUS (zeros before the store is open). */
struct ipvfs_l1_status ionode_l1_status(struct server *srv);

/* Stops tracing (--trace): closes srv->trace, after a write to it failed
 * (ionode.c) or at close. */
void ionode_trace_close(struct server *srv);

/* QoS (qos_svc.c): its service (QOS_CLASS QOS_SET QOS_STATUS); the
 * scheduler srv->qos, made with the store (ionode_open) and freed after it
 * (ionode_close: the requests still waiting start then, through their
 * start callback, and fail for want of a store); the class of c's connection (0: default); the clock the
 * scheduler runs on, in microseconds. */
extern const struct service qos_service;
int qos_svc_open(struct server *srv);
void qos_svc_close(struct server *srv);
uint32_t qos_svc_class(struct conn *c);
uint64_t qos_svc_now_us(void);

#endif
