#include "CLinux.h"
#include <unistd.h>
#include <sys/syscall.h>
#include <sched.h>
#include <fcntl.h>
#include <sys/mman.h>

int CLinux_gettid(void) {
    return (int)syscall(SYS_gettid);
}

int CLinux_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags) {
    return accept4(fd, addr, len, flags);
}

int CLinux_block_signals(const int *signals, int count, sigset_t *set_out) {
    sigemptyset(set_out);
    for (int i = 0; i < count; i++) sigaddset(set_out, signals[i]);
    return pthread_sigmask(SIG_BLOCK, set_out, NULL);
}

int CLinux_available_cpus(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
    int count = CPU_COUNT(&set);
    return count > 0 ? count : 1;
}

int CLinux_spawn_close_from(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

int CLinux_sealable_memfd(const char *name) {
    return memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
}

int CLinux_seal_for_good(int fd) {
    return fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL);
}

int CLinux_seals(int fd) {
    int seals = fcntl(fd, F_GET_SEALS);
    if (seals < 0) return -1;
    return ((seals & F_SEAL_WRITE) ? 1 : 0) | ((seals & F_SEAL_GROW) ? 2 : 0) | ((seals & F_SEAL_SHRINK) ? 4 : 0)
        | ((seals & F_SEAL_SEAL) ? 8 : 0);
}
