extension ConnectionStateMachine {
    /// The epoll registration a connection wants.
    struct Interest: Equatable {
        var readable: Bool
        var writable: Bool
    }

    /// What a blocked read or write waits for: TLS may need the opposite direction (a read that must
    /// first write a handshake record, a write that must first read one).
    enum Readiness: Equatable {
        case readable, writable
    }

    /// Whether reading or writing can make progress now, what each waits for when it cannot, and the
    /// registration epoll holds: the machine decides *whether* it wants to read or write, this says
    /// *when* it can and which registration that takes.
    struct SocketInterest {
        /// A read may make progress now (optimistic at first: the first request is usually already here).
        var readReady = true
        private var readWaitsFor = Readiness.readable
        private(set) var writeBlocked = false
        private var writeWaitsFor = Readiness.writable
        /// Nil until first registered with epoll.
        private var registered: Interest?

        /// An epoll event: each side waiting for this readiness may go on.
        mutating func ready(readable: Bool, writable: Bool) {
            if (readable && readWaitsFor == .readable) || (writable && readWaitsFor == .writable) { readReady = true }
            if (writable && writeWaitsFor == .writable) || (readable && writeWaitsFor == .readable) { writeBlocked = false }
        }

        /// A read returned bytes; with `moreBuffered` (TLS holds more already), read again at once.
        mutating func read(moreBuffered: Bool) {
            readReady = moreBuffered
            readWaitsFor = .readable
        }

        /// Reading can go on now (the handshake finished).
        mutating func readReadyAgain() {
            readReady = true
            readWaitsFor = .readable
        }

        mutating func readBlocked(until readiness: Readiness) {
            readReady = false
            readWaitsFor = readiness
        }

        mutating func writeBlocked(until readiness: Readiness) {
            writeBlocked = true
            writeWaitsFor = readiness
        }

        /// The registration that waits for what the connection wants, when it differs from the one
        /// epoll holds (then it is the one held from now on).
        mutating func register(reading: Bool, writing: Bool) -> Interest? {
            let wanted = Interest(
                readable: (reading && readWaitsFor == .readable) || (writing && writeWaitsFor == .readable),
                writable: (reading && readWaitsFor == .writable) || (writing && writeWaitsFor == .writable)
            )
            guard wanted != registered else { return nil }
            registered = wanted
            return wanted
        }
    }
}
