internal import Glibc

extension Posix {
    /// Raises the soft open-file limit to the hard limit (as nginx's worker_rlimit_nofile does): the
    /// common default of 1,024 would cap a server promised to hold 10,000 connections. Returns the limit.
    public static func raiseOpenFileLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { return Int(clamping: raised.rlim_cur) }
        }
        return Int(clamping: limit.rlim_cur)
    }
}
