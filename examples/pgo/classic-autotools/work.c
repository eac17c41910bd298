#include <string.h>

#include "work.h"

/* Branchy integer work whose hot path depends on the key: something for a profile to see. */
long work(long n, const char *key) {
    long acc = 0;
    size_t len = strlen(key) ? strlen(key) : 1;
    for (long i = 0; i < n; i++) {
        char c = key[i % (long)len];
        switch (c) {
        case 'a': acc += i * 3; break;
        case 'b': acc ^= i << 2; break;
        case 'c': acc -= i / 3; break;
        default:
            if (i % 7 == 0)
                acc += 11;
            else
                acc = acc * 5 % 1000003;
        }
    }
    return acc;
}
