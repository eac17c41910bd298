/* toy-server: a TCP server on 127.0.0.1:PORT doing CPU work per request.
 *
 *   toy-server PORT [ROUNDS]
 *
 * Each request is one line holding a number (the seed); the answer is one line with the
 * hash of a 4 KiB buffer filled from that seed, rehashed ROUNDS times (default 200). One
 * client connection at a time, requests answered in order. SIGTERM or SIGINT: finish the
 * current request, then exit(0) -- a normal exit, so an instrumented build writes its
 * profile (.gcda, .profraw) on hone's stop signal. A line "exit" ends the server at once
 * with _exit(3), writing no profile: the tests' server that dies under load. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>

#define BUF 4096

static volatile sig_atomic_t stopping = 0;

static void on_stop(int sig) { (void)sig; stopping = 1; }

/* Branchy on purpose: what a profile can lay out better. */
static uint64_t mix(const unsigned char *buf, size_t n, uint64_t h) {
    for (size_t i = 0; i < n; i++) {
        unsigned char c = buf[i];
        if (c < 64)
            h = (h ^ c) * 0x100000001b3ULL;
        else if (c < 128)
            h = (h + c) * 0x9e3779b97f4a7c15ULL;
        else if (c & 1)
            h ^= (h << 7) | c;
        else
            h = (h >> 3) + c * 31u;
    }
    return h;
}

static uint64_t work(uint64_t seed, long rounds) {
    static unsigned char buf[BUF];
    uint64_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < BUF; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        buf[i] = (unsigned char)x;
    }
    uint64_t h = 1469598103934665603ULL;
    for (long r = 0; r < rounds; r++) {
        h = mix(buf, BUF, h);
        buf[r % BUF] = (unsigned char)h;
    }
    return h;
}

/* Answer every line of one connection; 0 when the client closed it. */
static int serve(int fd, long rounds) {
    char in[256];
    size_t have = 0;
    for (;;) {
        ssize_t got = read(fd, in + have, sizeof in - 1 - have);
        if (got < 0 && errno == EINTR) {
            if (stopping) return 0;
            continue;
        }
        if (got <= 0) return 0;
        have += (size_t)got;
        in[have] = 0;
        char *start = in, *nl;
        while ((nl = strchr(start, '\n')) != NULL) {
            *nl = 0;
            if (strcmp(start, "exit") == 0) {
                fprintf(stderr, "toy-server: exit requested, dying\n");
                _exit(3);
            }
            char out[64];
            int len = snprintf(out, sizeof out, "%016llx\n",
                               (unsigned long long)work(strtoull(start, NULL, 10), rounds));
            if (write(fd, out, (size_t)len) != len) return 0;
            start = nl + 1;
        }
        have = strlen(start);
        memmove(in, start, have);
        if (have >= sizeof in - 1) return 0; /* a line too long: drop the client */
        if (stopping) return 0;
    }
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s PORT [ROUNDS]\n", argv[0]);
        return 2;
    }
    int port = atoi(argv[1]);
    long rounds = argc > 2 ? atol(argv[2]) : 200;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop; /* no SA_RESTART: accept() and read() return EINTR */
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    int ls = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(ls, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(ls, 16) != 0) {
        perror("toy-server: bind/listen");
        return 1;
    }
    printf("toy-server listening on 127.0.0.1:%d (%ld rounds per request)\n", port, rounds);
    fflush(stdout);
    long served = 0;
    while (!stopping) {
        int fd = accept(ls, NULL, NULL);
        if (fd < 0) {
            if (errno == EINTR) continue;
            perror("toy-server: accept");
            return 1;
        }
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        serve(fd, rounds);
        close(fd);
        served++;
    }
    close(ls);
    printf("toy-server: stopping after %ld connections\n", served);
    return 0; /* exit(): the profile is written here */
}
