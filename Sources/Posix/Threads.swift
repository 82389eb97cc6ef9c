internal import CLinux
internal import Glibc
import Synchronization

extension Posix {
    /// Online CPU cores.
    public static func cpuCount() -> Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    /// The CPUs this process may run on (fewer than `cpuCount()` under taskset or a cgroup cpuset).
    public static func availableCPUs() -> Int { Int(CLinux_available_cpus()) }

    /// Runs `body` for each index in `0..<count` on up to `availableCPUs()` threads (the caller's
    /// among them) and returns when every index is done. Indices are handed out in small batches
    /// from a shared counter, so uneven work still spreads evenly.
    public static func parallelFor(_ count: Int, _ body: @Sendable (Int) -> Void) {
        parallelFor(count, local: {}, { _, index in body(index) })
    }

    /// As `parallelFor`, each thread with a value of its own, made by `makeLocal` when the thread starts
    /// and handed to each of its calls: for what the threads must not share. An object every thread
    /// retains and releases is a counter each core takes from the other at every update; at a million
    /// sites that was most of the time spent preparing their responses.
    public static func parallelFor<Local>(
        _ count: Int,
        local makeLocal: @Sendable () -> Local,
        _ body: @Sendable (inout Local, Int) -> Void
    ) {
        let workers = min(availableCPUs(), 8, max(1, count / 32))
        guard workers > 1 else {
            var local = makeLocal()
            for index in 0..<count { body(&local, index) }
            return
        }
        let next = Atomic<Int>(0)
        withoutActuallyEscaping(makeLocal) { makeLocal in
            withoutActuallyEscaping(body) { body in
                let work = UncheckedSendable {
                    let batch = 16
                    var local = makeLocal()
                    while true {
                        let start = next.wrappingAdd(batch, ordering: .relaxed).oldValue
                        if start >= count { return }
                        for index in start..<min(start + batch, count) { body(&local, index) }
                    }
                }
                var threads: [Thread] = []
                for _ in 1..<workers {
                    // Without a thread the caller does the work alone: slower, never wrong.
                    if let thread = try? Thread({ work.value() }) { threads.append(thread) }
                }
                work.value()
                for thread in threads { thread.join() }
            }
        }
    }

    /// nice +10 for the calling thread only (Linux applies setpriority to a thread id).
    public static func lowerCurrentThreadPriority() {
        let thread = id_t(CLinux_gettid())
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), thread, 10)
    }

    /// A joinable OS thread running `body`: event loops must not live on Swift's cooperative pool,
    /// since they block in epoll_wait.
    public final class Thread: @unchecked Sendable {
        private var handle = pthread_t()
        private let body: @Sendable () -> Void

        public init(_ body: @escaping @Sendable () -> Void) throws(SystemError) {
            self.body = body
            let context = Unmanaged.passRetained(self).toOpaque()
            let result = pthread_create(
                &handle,
                nil,
                { raw in
                    let thread = Unmanaged<Thread>.fromOpaque(raw!).takeRetainedValue()
                    thread.body()
                    return nil
                },
                context
            )
            if result != 0 {
                Unmanaged<Thread>.fromOpaque(context).release()
                throw SystemError(call: "pthread_create", code: result)
            }
        }

        public func join() {
            pthread_join(handle, nil)
        }

        /// Lets the thread end on its own, for work whose result may no longer be wanted (a name lookup
        /// that outlived its deadline).
        public func detach() {
            pthread_detach(handle)
        }
    }
}

/// Carries a closure that is only ever run while its owner waits (`Posix.parallelFor` joins every thread).
private struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
