/* The client pool of the mount (see the threading contract in fusefs.h). */
#include "fuse/fusefs.h"

#include <errno.h>
#include <string.h>

int fusefs_pool_init(struct fusefs_pool *pool, const char *map_path, struct ipvfs_error *out_err)
{
    int rc, i;

    memset(pool, 0, sizeof(*pool));
    if ((rc = pthread_mutex_init(&pool->lock, NULL)) != 0)
        return -rc;
    if ((rc = pthread_cond_init(&pool->freed, NULL)) != 0) {
        rc = -rc;
        goto destroy_lock;
    }
    for (i = 0; i < FUSEFS_CLIENTS; i++)
        if ((rc = ipvfs_client_new(map_path, FUSEFS_CLIENT_ID + (uint32_t)i, &pool->clients[i],
                                   out_err)) < 0)
            goto put_clients;
    return 0;

put_clients:
    while (--i >= 0)
        ipvfs_client_put(pool->clients[i]);
    pthread_cond_destroy(&pool->freed);
destroy_lock:
    pthread_mutex_destroy(&pool->lock);
    return rc;
}

void fusefs_pool_destroy(struct fusefs_pool *pool)
{
    for (int i = 0; i < FUSEFS_CLIENTS; i++)
        ipvfs_client_put(pool->clients[i]);
    pthread_cond_destroy(&pool->freed);
    pthread_mutex_destroy(&pool->lock);
}

struct ipvfs_client *fusefs_pool_get(struct fusefs_pool *pool)
{
    struct ipvfs_client *c = NULL;

    pthread_mutex_lock(&pool->lock);
    while (!c) {
        for (int i = 0; i < FUSEFS_CLIENTS && !c; i++) {
            if (!pool->busy[i]) {
                pool->busy[i] = 1;
                c = pool->clients[i];
            }
        }
        if (!c)
            pthread_cond_wait(&pool->freed, &pool->lock);
    }
    pthread_mutex_unlock(&pool->lock);
    return c;
}

void fusefs_pool_put(struct fusefs_pool *pool, struct ipvfs_client *client)
{
    pthread_mutex_lock(&pool->lock);
    for (int i = 0; i < FUSEFS_CLIENTS; i++)
        if (pool->clients[i] == client)
            pool->busy[i] = 0;
    pthread_cond_signal(&pool->freed);
    pthread_mutex_unlock(&pool->lock);
}
