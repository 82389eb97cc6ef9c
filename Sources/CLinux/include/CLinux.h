#ifndef CLINUX_H
#define CLINUX_H
/* Linux APIs that Swift's Glibc module does not expose: it has no <sys/epoll.h>, <sys/eventfd.h>,
 * <sys/signalfd.h> or <sys/timerfd.h>, and accept4 is declared only under _GNU_SOURCE
 * (defined for this target in Package.swift). */
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/sendfile.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <pthread.h>
#include <malloc.h>
#include <spawn.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/uio.h>

int CLinux_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags);

/* gettid() is declared only under _GNU_SOURCE (glibc 2.30+). */
int CLinux_gettid(void);

/* The CPUs this thread may run on (taskset, cgroup cpusets); CPU_COUNT is a macro. */
int CLinux_available_cpus(void);

/* sigset_t manipulation is a set of macros in some libcs; these are plain calls. */
int CLinux_block_signals(const int *signals, int count, sigset_t *set_out);

/* posix_spawn_file_actions_addclosefrom_np (glibc 2.34+) is declared only under _GNU_SOURCE. */
int CLinux_spawn_close_from(posix_spawn_file_actions_t *actions, int from);

/* memfd_create and the F_SEAL_* seals are declared only under _GNU_SOURCE: a close-on-exec memory file
 * that can be sealed, and one call that seals it against writing, growing, shrinking and more seals. */
int CLinux_sealable_memfd(const char *name);
int CLinux_seal_for_good(int fd);
/* Which seals are in force, one bit each: write 1, grow 2, shrink 4, seal 8 (-1 on failure). */
int CLinux_seals(int fd);

/* The event loops' socket calls made with syscall(2), not through glibc's wrappers of the same names:
 * those are cancellation points, and in a process of more than one thread each call takes the thread in
 * and out of asynchronous cancellation, two atomic compare-and-swaps around every read and write of
 * every request. No thread of this process is ever cancelled. Same results: -1 and errno on failure. */
static inline long CLinux_recv(int fd, void *buffer, size_t length, int flags) {
    return syscall(SYS_recvfrom, fd, buffer, length, flags, NULL, NULL);
}
static inline long CLinux_send(int fd, const void *buffer, size_t length, int flags) {
    return syscall(SYS_sendto, fd, buffer, length, flags, NULL, 0);
}
static inline long CLinux_writev(int fd, const struct iovec *vectors, int count) {
    return syscall(SYS_writev, fd, vectors, count);
}
static inline long CLinux_sendmsg(int fd, const struct msghdr *message, int flags) {
    return syscall(SYS_sendmsg, fd, message, flags);
}
static inline long CLinux_sendfile(int fd, int file, off_t *offset, size_t count) {
    return syscall(SYS_sendfile, fd, file, offset, count);
}
/* epoll_pwait with no signal mask is epoll_wait, and the one of the two every architecture has. */
static inline int CLinux_epoll_wait(int fd, struct epoll_event *events, int capacity, int timeout) {
    return (int)syscall(SYS_epoll_pwait, fd, events, capacity, timeout, NULL, (size_t)8);
}
#endif
