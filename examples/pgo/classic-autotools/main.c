#include <stdio.h>
#include <stdlib.h>

#include "work.h"

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 100000;
    const char *key = argc > 2 ? argv[2] : "abcd";
    printf("%ld\n", work(n, key));
    return 0;
}
