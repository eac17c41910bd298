/* The CI gate example's benchmark: a fixed CPU-bound workload, no arguments, no knobs.
 *
 * It hashes a 256 KiB table of pseudo-random words ROUNDS times; the hash is a chain of
 * multiply-adds, so the time is set by the work, not by memory. WORK_PERCENT (default
 * 100) scales the rounds: building with -DWORK_PERCENT=115 stands for a pull request that
 * makes the program 15% slower. It prints the hash so the compiler keeps the work. */
#include <stdint.h>
#include <stdio.h>

#ifndef WORK_PERCENT
#define WORK_PERCENT 100
#endif
#define ROUNDS 600 /* about 30 ms of CPU on a current x86 core */
#define WORDS (1 << 16)

static uint32_t table[WORDS];

int main(void) {
    uint64_t state = 88172645463325252ull, hash = 0;
    for (int i = 0; i < WORDS; i++) { /* xorshift64: the same table on every run */
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        table[i] = (uint32_t)state;
    }
    long rounds = (long)ROUNDS * WORK_PERCENT / 100;
    for (long r = 0; r < rounds; r++)
        for (int i = 0; i < WORDS; i++)
            hash = hash * 31 + (table[i] ^ (uint32_t)r);
    printf("%llu\n", (unsigned long long)hash);
    return 0;
}
