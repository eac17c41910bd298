/* Syscall-heavy test program: one-byte writes to /dev/null and getppid() calls, so most
 * of its CPU time is spent in the kernel. Argument: number of iterations. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 400000;
    int fd = open("/dev/null", O_WRONLY);
    if (fd < 0) return 1;
    char c = 'x';
    for (long i = 0; i < n; i++) {
        if (write(fd, &c, 1) != 1) return 1;
        syscall(SYS_getppid);
    }
    close(fd);
    printf("done %ld\n", n);
    return 0;
}
