/* cache/policy.c: the policies by name (options, the simulator). */
#include "cache/internal.h"

#include <string.h>

const char *const cache_policy_names[] = { "lru", "demote", "mq", "demote-mq", NULL };

static const struct cache_ops *const policies[] = { &cache_ops_lru, &cache_ops_demote, &cache_ops_mq,
                                                  &cache_ops_demote_mq };

const struct cache_ops *cache_policy_find(const char *name)
{
    for (size_t i = 0; i < sizeof(policies) / sizeof(policies[0]); i++)
        if (strcmp(policies[i]->name, name) == 0)
            return policies[i];
    return NULL;
}
