/* toy-server: a TCP server on 127.0.0.1:PORT doing CPU work per request.
 *
 *   toy-server PORT [ROUNDS [WORKERS [USER]]]
 *
 * Each request is one line holding a number (the seed); the answer is one line with the
 * hash of a 4 KiB buffer filled from that seed, rehashed ROUNDS times (default 200). One
 * client connection at a time, requests answered in order. SIGTERM or SIGINT: finish the
 * current request, then exit(0) -- a normal exit, so an instrumented build writes its
 * profile (.gcda, .profraw) on hone's stop signal. A line "exit" ends the server at once
 * with _exit(3), writing no profile: the tests' server that dies under load.
 *
 * WORKERS > 0 (default 0: one process): pre-forking, as PostgreSQL or nginx do. The master
 * listens and forks WORKERS processes that accept on the shared socket and serve; it never
 * serves itself. SIGTERM to the master: it forwards TERM to the workers, waits for them
 * (each exit()s and writes its profile), then exits normally. A worker that ends on its own
 * (the "exit" request) makes the master stop the others and exit with that worker's status.
 * USER (a master started as root): each worker switches to that user after the fork, as
 * nginx's workers become "nobody" -- they then write their profiles as that user -- and drops
 * its environment (nginx keeps only what its env directives name). */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
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

/* Accept and serve until stopped; returns the connections served. A worker polls with a
 * timeout, so a TERM that lands between its check of `stopping` and accept() still ends it. */
static long accept_loop(int ls, long rounds, int worker) {
    int one = 1;
    long served = 0;
    while (!stopping) {
        if (worker) {
            struct pollfd p = {.fd = ls, .events = POLLIN};
            if (poll(&p, 1, 200) <= 0) continue;
        }
        int fd = accept(ls, NULL, NULL);
        if (fd < 0) {
            if (errno == EINTR || (worker && (errno == EAGAIN || errno == EWOULDBLOCK))) continue;
            perror("toy-server: accept");
            exit(1);
        }
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        serve(fd, rounds);
        close(fd);
        served++;
    }
    return served;
}

/* The pre-forking master: fork the workers, wait for a stop signal (or a worker's own end),
 * forward TERM, reap every worker, exit normally (or with the status of a worker that died). */
/* A worker leaves root for ``user`` (NULL: stays as it is) and, as nginx's workers do, drops
 * the environment it was started with. */
static void become(const char *user) {
    if (!user) return;
    struct passwd *pw = getpwnam(user);
    if (!pw || setgroups(0, NULL) != 0 || setgid(pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0) {
        fprintf(stderr, "toy-server: cannot become %s\n", user);
        _exit(4);
    }
    clearenv();
}

static int master(int ls, long rounds, int workers, const char *user) {
    pid_t pids[64];
    int alive = 0, status = 0;
    fcntl(ls, F_SETFL, fcntl(ls, F_GETFL) | O_NONBLOCK); /* workers race for each connection */
    for (int i = 0; i < workers && i < 64; i++) {
        pid_t pid = fork();
        if (pid < 0) { perror("toy-server: fork"); stopping = 1; break; }
        if (pid == 0) {
            become(user);
            long served = accept_loop(ls, rounds, 1);
            printf("toy-server worker %d: stopping after %ld connections\n", (int)getpid(), served);
            return 0; /* exit() in the worker: its profile is written here */
        }
        pids[alive++] = pid;
    }
    close(ls);
    int left = alive, forwarded = 0;
    while (left > 0) {
        if (stopping && !forwarded) {
            for (int i = 0; i < alive; i++)
                if (pids[i] > 0) kill(pids[i], SIGTERM);
            forwarded = 1;
        }
        int st;
        pid_t pid = waitpid(-1, &st, WNOHANG); /* polled: a TERM never lands before a blocking wait */
        if (pid == 0) { usleep(20000); continue; }
        if (pid < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (int i = 0; i < alive; i++)
            if (pids[i] == pid) pids[i] = 0;
        left--;
        if (!stopping) { /* a worker ended on its own: stop the rest, report its status */
            fprintf(stderr, "toy-server: worker %d ended (status %d), stopping\n", (int)pid, st);
            status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            stopping = 1;
        }
    }
    printf("toy-server: master stopping after %d workers\n", alive);
    return status; /* exit(): the master's own profile is written here */
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s PORT [ROUNDS [WORKERS [USER]]]\n", argv[0]);
        return 2;
    }
    int port = atoi(argv[1]);
    long rounds = argc > 2 ? atol(argv[2]) : 200;
    int workers = argc > 3 ? atoi(argv[3]) : 0;
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
    printf("toy-server listening on 127.0.0.1:%d (%ld rounds per request, %d workers)\n", port, rounds,
           workers);
    fflush(stdout);
    if (workers > 0)
        return master(ls, rounds, workers, argc > 4 ? argv[4] : NULL);
    long served = accept_loop(ls, rounds, 0);
    close(ls);
    printf("toy-server: stopping after %ld connections\n", served);
    return 0; /* exit(): the profile is written here */
}
