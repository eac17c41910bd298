/* fcopy: a small fstime-style file write/read/copy benchmark (after UnixBench's fstime).
 *
 * Each phase runs for a fixed time (-t seconds) with one buffer size (-b bytes) on files
 * of at most -m blocks in directory -d, rewinding at the end of the file as fstime does.
 * Output, one line per phase, throughput in KiB/s:
 *     write_kBps: 123456
 *     read_kBps: 234567
 *     copy_kBps: 98765
 * Usage: fcopy [-d DIR] [-b BYTES] [-t SECONDS] [-m BLOCKS] [-p w|r|c|wrc]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what) {
    fprintf(stderr, "fcopy: %s: %s\n", what, strerror(errno));
    exit(1);
}

/* Write blocks for `secs` seconds; wrap to the start after `maxblocks`. Returns KiB/s. */
static double write_phase(int fd, char *buf, size_t bs, long maxblocks, double secs) {
    long blocks = 0, total = 0;
    double start = now(), elapsed;
    do {
        if (write(fd, buf, bs) != (ssize_t)bs) die("write");
        total += bs;
        if (++blocks >= maxblocks) {
            if (lseek(fd, 0, SEEK_SET) < 0) die("lseek");
            blocks = 0;
        }
    } while ((elapsed = now() - start) < secs);
    return total / 1024.0 / elapsed;
}

static double read_phase(int fd, char *buf, size_t bs, double secs) {
    long total = 0;
    double start = now(), elapsed;
    if (lseek(fd, 0, SEEK_SET) < 0) die("lseek");
    do {
        ssize_t n = read(fd, buf, bs);
        if (n < 0) die("read");
        if (n == 0) {
            if (lseek(fd, 0, SEEK_SET) < 0) die("lseek");
            continue;
        }
        total += n;
    } while ((elapsed = now() - start) < secs);
    return total / 1024.0 / elapsed;
}

static double copy_phase(int src, int dst, char *buf, size_t bs, double secs) {
    long total = 0;
    double start = now(), elapsed;
    if (lseek(src, 0, SEEK_SET) < 0 || lseek(dst, 0, SEEK_SET) < 0) die("lseek");
    do {
        ssize_t n = read(src, buf, bs);
        if (n < 0) die("read");
        if (n == 0) {
            if (lseek(src, 0, SEEK_SET) < 0 || lseek(dst, 0, SEEK_SET) < 0) die("lseek");
            continue;
        }
        if (write(dst, buf, (size_t)n) != n) die("write");
        total += n;
    } while ((elapsed = now() - start) < secs);
    return total / 1024.0 / elapsed;
}

int main(int argc, char **argv) {
    const char *dir = ".", *phases = "wrc";
    size_t bs = 1024;
    double secs = 2.0;
    long maxblocks = 2000;
    int opt;
    while ((opt = getopt(argc, argv, "d:b:t:m:p:")) != -1) {
        switch (opt) {
        case 'd': dir = optarg; break;
        case 'b': bs = (size_t)atol(optarg); break;
        case 't': secs = atof(optarg); break;
        case 'm': maxblocks = atol(optarg); break;
        case 'p': phases = optarg; break;
        default:
            fprintf(stderr, "usage: fcopy [-d DIR] [-b BYTES] [-t SECONDS] [-m BLOCKS] [-p wrc]\n");
            return 2;
        }
    }
    if (bs == 0 || secs <= 0 || maxblocks <= 0) {
        fprintf(stderr, "fcopy: -b, -t and -m must be positive\n");
        return 2;
    }
    char *buf = malloc(bs);
    if (!buf) die("malloc");
    memset(buf, 'x', bs);
    char f0[4096], f1[4096];
    snprintf(f0, sizeof f0, "%s/fcopy.%d.0", dir, (int)getpid());
    snprintf(f1, sizeof f1, "%s/fcopy.%d.1", dir, (int)getpid());
    int fd0 = open(f0, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd0 < 0) die(f0);
    int fd1 = open(f1, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd1 < 0) die(f1);
    /* The files go away on exit even if a phase dies. */
    unlink(f0);
    unlink(f1);
    /* Read and copy need a full source file, whatever phases were asked for. */
    for (long i = 0; i < maxblocks; i++)
        if (write(fd0, buf, bs) != (ssize_t)bs) die("write");
    if (strchr(phases, 'w')) printf("write_kBps: %.0f\n", write_phase(fd0, buf, bs, maxblocks, secs));
    if (strchr(phases, 'r')) printf("read_kBps: %.0f\n", read_phase(fd0, buf, bs, secs));
    if (strchr(phases, 'c')) printf("copy_kBps: %.0f\n", copy_phase(fd0, fd1, buf, bs, secs));
    close(fd0);
    close(fd1);
    free(buf);
    return 0;
}
