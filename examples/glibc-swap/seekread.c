/* seekread: a concurrent fseek+fread workload in the spirit of seed 002 (DolphinDB).
 *
 * T threads share a fixed amount of work: OPS "queries", each opening one of FILES
 * partition files, doing SEEKS random fseek + 4 KiB fread pairs and closing it. Total
 * work is independent of T, so on a perfect library the elapsed time would not grow
 * with T; what grows is contention inside the C library (stdio's global list lock on
 * fopen/fclose, per-FILE locks, malloc arenas for the stdio buffers).
 *
 *   seekread -t THREADS [-n OPS] [-s SEEKS] [-f FILES] [-d DIR]
 *
 * Prints "elapsed_ms: X" and "queries_per_s: Y". Creates DIR/part-NNN (256 KiB each)
 * on first use. Uses only symbols old enough for glibc 2.31.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define FILE_BYTES (256 * 1024)
#define CHUNK 4096

static const char *dir = "/tmp/hone-seekread";
static long ops = 4000, seeks = 16;
static int files = 64;

struct job { long queries; unsigned seed; unsigned long long sum; };

static void make_files(void) {
    char path[512];
    mkdir(dir, 0755);
    char *buf = malloc(FILE_BYTES);
    for (int i = 0; i < FILE_BYTES; i++) buf[i] = (char)(i * 131 + 7);
    for (int f = 0; f < files; f++) {
        snprintf(path, sizeof path, "%s/part-%03d", dir, f);
        if (access(path, R_OK) == 0) continue;
        FILE *fp = fopen(path, "wb");
        if (!fp || fwrite(buf, 1, FILE_BYTES, fp) != FILE_BYTES) { perror(path); exit(1); }
        fclose(fp);
    }
    free(buf);
}

static void *worker(void *arg) {
    struct job *job = arg;
    char path[512], buf[CHUNK];
    for (long q = 0; q < job->queries; q++) {
        int f = (int)(rand_r(&job->seed) % (unsigned)files);
        snprintf(path, sizeof path, "%s/part-%03d", dir, f);
        FILE *fp = fopen(path, "rb");
        if (!fp) { perror(path); exit(1); }
        for (long s = 0; s < seeks; s++) {
            long off = (long)(rand_r(&job->seed) % (FILE_BYTES - CHUNK));
            if (fseek(fp, off, SEEK_SET) != 0) { perror("fseek"); exit(1); }
            size_t got = fread(buf, 1, CHUNK, fp);
            job->sum += (unsigned char)buf[got / 2];
        }
        fclose(fp);
    }
    return NULL;
}

int main(int argc, char **argv) {
    int threads = 1, opt;
    while ((opt = getopt(argc, argv, "t:n:s:f:d:")) != -1) {
        switch (opt) {
        case 't': threads = atoi(optarg); break;
        case 'n': ops = atol(optarg); break;
        case 's': seeks = atol(optarg); break;
        case 'f': files = atoi(optarg); break;
        case 'd': dir = optarg; break;
        default:
            fprintf(stderr, "usage: %s -t THREADS [-n OPS] [-s SEEKS] [-f FILES] [-d DIR]\n", argv[0]);
            return 2;
        }
    }
    if (threads < 1 || ops < threads || files < 1) { fprintf(stderr, "bad arguments\n"); return 2; }
    make_files();
    pthread_t *tid = calloc((size_t)threads, sizeof *tid);
    struct job *jobs = calloc((size_t)threads, sizeof *jobs);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < threads; i++) {
        jobs[i].queries = ops / threads + (i < ops % threads);
        jobs[i].seed = 1234u + (unsigned)i;
        if (pthread_create(&tid[i], NULL, worker, &jobs[i]) != 0) { perror("pthread_create"); return 1; }
    }
    unsigned long long sum = 0;
    for (int i = 0; i < threads; i++) { pthread_join(tid[i], NULL); sum += jobs[i].sum; }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
    printf("threads: %d\nchecksum: %llu\nelapsed_ms: %.3f\nqueries_per_s: %.1f\n", threads, sum, ms,
           ops / (ms / 1e3));
    free(tid); free(jobs);
    return 0;
}
