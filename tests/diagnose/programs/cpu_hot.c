/* CPU-bound test program: hot_spin() gets ~8x the work of warm_spin().
 * `noinline` keeps both as separate frames; -DEXTRA=N adds work to changed_spin() only,
 * so two builds differ in exactly one function (for the differential flame graph test). */
#include <stdio.h>
#include <stdlib.h>

#ifndef EXTRA
#define EXTRA 1
#endif

static volatile unsigned long sink;

/* Each function has its own loop (no shared helper) so no tail call hides it from the stack. */
#define SPIN(n, seed)                                                                       \
    do {                                                                                    \
        unsigned long x = (seed);                                                           \
        for (unsigned long i = 0; i < (n); i++) x = x * 6364136223846793005UL + 1442695040888963407UL; \
        sink += x;                                                                          \
    } while (0)

__attribute__((noinline)) void hot_spin(unsigned long n) { SPIN(8 * n, 1); }
__attribute__((noinline)) void warm_spin(unsigned long n) { SPIN(n, 2); }
__attribute__((noinline)) void changed_spin(unsigned long n) { SPIN(EXTRA * n, 3); }

int main(int argc, char **argv) {
    unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 20000000UL;
    for (int r = 0; r < 4; r++) {
        hot_spin(n / 4);
        warm_spin(n / 4);
        changed_spin(n / 4);
    }
    printf("done %lu\n", sink);
    return 0;
}
