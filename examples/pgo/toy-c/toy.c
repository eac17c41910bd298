/* A tiny bytecode interpreter: branchy, call-heavy code where profile feedback
 * (inlining hot helpers, unrolling, block order) changes the instruction count. */
#include <stdio.h>
#include <stdlib.h>

enum { OP_ADD, OP_SUB, OP_MUL, OP_XOR, OP_SHR, OP_JNZ, OP_HALT, OP_MIX, OP_ROT, OP_DIV, OP_POP };

__attribute__((noinline)) static long rare_fixup(long acc, long i) {
    /* Large enough that -O2 will not inline it without a profile saying it is cold. */
    for (int k = 0; k < 8; k++) acc = (acc * 31 + i + k) ^ (acc >> 7);
    return acc;
}

static long step(const unsigned char *code, long acc, long i) {
    for (int pc = 0;; pc++) {
        switch (code[pc]) {
        case OP_ADD: acc += i; break;
        case OP_SUB: acc -= i >> 1; break;
        case OP_MUL: acc *= 3; break;
        case OP_XOR: acc ^= i * 0x9e3779b97f4a7c15L; break;
        case OP_SHR: acc = (acc >> 3) | (acc << 61); break;
        case OP_JNZ: if ((i & 1023) == 0) acc = rare_fixup(acc, i); break;
        case OP_HALT: return acc;
        /* Never executed by our programs: makes step() too big to inline without a
         * profile saying which cases are hot. */
        case OP_MIX: for (int k = 0; k < 5; k++) acc = acc * 6364136223846793005L + (i ^ k); break;
        case OP_ROT: acc = (acc << 13) | (acc >> 51); acc ^= acc >> 17; acc *= 0xff51afd7ed558ccdL; break;
        case OP_DIV: acc = i ? acc / (i | 1) + acc % 97 : acc; acc += acc / 7 - acc / 11; break;
        case OP_POP: acc = __builtin_popcountl(acc) + __builtin_clzl(acc | 1) * i + (acc % 1000003); break;
        }
    }
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 3000000;
    static const unsigned char code[] = {OP_ADD, OP_XOR, OP_MUL, OP_SHR, OP_SUB, OP_JNZ, OP_ADD, OP_HALT};
    long acc = 1;
    for (long i = 0; i < n; i++) acc = step(code, acc, i);
    printf("%ld\n", acc);
    return 0;
}
