import Posix
import Synchronization
import TLS

extension EventLoop {
    func acceptConnections(listenerAt position: Int) {
        let listener = listeners[position]
        guard listener.fd >= 0 else { return }
        // A bounded batch per wake-up keeps one busy listener from starving established connections.
        for _ in 0..<64 {
            let accepted: Posix.AcceptResult
            do {
                accepted = try Posix.accept(listener.fd)
            } catch {
                // EMFILE/ENFILE: out of descriptors. Log and let the backlog wait for the next wake-up.
                Log.error("accept on \(listener.address): \(error)")
                return
            }
            guard case .accepted(let fd, let peer) = accepted else { return }
            let arrival = Arrival(fd: fd, peer: peer, listener: listener, since: clock.now)
            if listener.role == .main && !state.connections.reserve() {
                switch makeRoom() {
                case .madeRoom where state.connections.reserve():
                    break
                case .madeRoom, .requestedElsewhere:
                    // Held (not read, not counted) until the loop that owns the victim has closed it; no
                    // more are accepted meanwhile, so the rest wait in the kernel's backlog.
                    waitingForRoom.append(arrival)
                    pauseAccepting()
                    return
                case .nothingToEvict:
                    // Every connection is being answered: the client is told at once (a reset) rather than
                    // left waiting.
                    Posix.abort(fd)
                    continue
                }
            }
            start(arrival)
        }
    }

    /// A connection accepted at the cap, waiting for a place.
    struct Arrival {
        var fd: Int32
        var peer: SocketAddress
        var listener: ListenerSocket
        var since: Int64
    }

    /// Makes a connection of an accepted socket (its place under the cap already taken).
    private func start(_ arrival: Arrival) {
        let transport: Transport
        if arrival.listener.tls {
            guard let session = state.snapshot.tls?.session(fd: arrival.fd) else {
                if arrival.listener.role == .main { state.connections.release() }
                Posix.abort(arrival.fd)
                return
            }
            transport = .tls(session)
        } else {
            transport = .plain
        }
        let slot = freeSlots.popLast() ?? connections.count
        if slot == connections.count { connections.append(nil) }
        let connection = Connection(
            fd: arrival.fd,
            slot: slot,
            serial: nextSerial,
            listener: arrival.listener.role,
            peer: arrival.peer,
            transport: transport,
            machine: ConnectionStateMachine(
                settings: settings.connection,
                clock: clock,
                usesTLS: arrival.listener.tls,
                proxyProtocol: arrival.listener.proxyProtocol,
                keepsBodies: arrival.listener.role == .admin
            )
        )
        nextSerial += 1
        pendingStats.countAccepted()
        adopt(connection)
        // The first read is optimistic: the request is usually already here, so a one-shot exchange
        // (Connection: close) completes without ever touching epoll.
        drive(connection)
    }

    /// On a wake-up or a timer tick: start the held connections that now have a place (one held longer
    /// than a second is reset: the server is full of connections being answered), then listen again. On a
    /// tick, room is asked for again for those still waiting (a place freed by an eviction can be taken by
    /// a connection another loop accepted first).
    func admitWaiting(askForRoom: Bool) {
        guard !waitingForRoom.isEmpty || handle.acceptPaused.load(ordering: .relaxed) else { return }
        var stillWaiting: [Arrival] = []
        for arrival in waitingForRoom {
            if state.connections.reserve() {
                start(arrival)
            } else if clock.now - arrival.since > 1_000_000 {
                Posix.abort(arrival.fd)
            } else {
                stillWaiting.append(arrival)
            }
        }
        waitingForRoom = stillWaiting
        if stillWaiting.isEmpty {
            resumeAccepting()
        } else if askForRoom {
            for _ in stillWaiting where makeRoom() == .nothingToEvict { break }
        }
    }

    enum RoomOutcome {
        case madeRoom
        case requestedElsewhere
        case nothingToEvict
    }

    /// At the connection cap: close the connection, on any loop, that has been idle longest — else the one
    /// that has spent longest sending a request (header or body: the slowloris suspect). A connection
    /// being answered is never chosen. Another loop's connection is closed by that loop, on request. What
    /// other loops hold is known as of their last timer tick or eviction (at most 100 ms old): scanning
    /// every connection after every request to keep it exact would cost more than it could win.
    func makeRoom() -> RoomOutcome {
        let local = localEvictionCandidate()
        var bestLoop = local == nil ? nil : index
        var bestRank = local.map { LoopHandle.encode($0.rank) } ?? .max
        for (other, handle) in state.loopHandles.enumerated() where other != index {
            let rank = handle.oldestCandidate.load(ordering: .relaxed)
            if rank < bestRank {
                bestRank = rank
                bestLoop = other
            }
        }
        guard let bestLoop else { return .nothingToEvict }
        if bestLoop == index, let local {
            evict(local.connection)
            publishOldestCandidate()
            return .madeRoom
        }
        let owner = state.loopHandles[bestLoop]
        owner.evictionRequests.add(1, ordering: .relaxed)
        // Until the owner publishes again, its candidate is spoken for.
        owner.oldestCandidate.store(.max, ordering: .relaxed)
        owner.epoll.wake()
        return .requestedElsewhere
    }

    func localEvictionCandidate() -> (connection: Connection, rank: (group: Int, since: Int64))? {
        var victim: Connection?
        var victimRank: (group: Int, since: Int64)?
        for case let connection? in connections where connection.listener == .main {
            guard let rank = connection.machine.evictionRank else { continue }
            if let best = victimRank, (best.group, best.since) <= (rank.group, rank.since) { continue }
            victim = connection
            victimRank = rank
        }
        guard let victim, let victimRank else { return nil }
        return (victim, victimRank)
    }

    private func evict(_ victim: Connection) {
        pendingStats.add { $0.connectionsEvicted += 1 }
        victim.machine.evict()
        drive(victim)
    }

    /// Evictions other loops asked of this one (on its wake-up), then lets paused loops accept again.
    func evictOnRequest() {
        let requested = handle.evictionRequests.exchange(0, ordering: .relaxed)
        guard requested > 0 else { return }
        for _ in 0..<requested {
            guard let candidate = localEvictionCandidate() else { break }
            evict(candidate.connection)
        }
        publishOldestCandidate()
        for other in state.loopHandles where other.acceptPaused.load(ordering: .relaxed) { other.epoll.wake() }
    }

    func publishOldestCandidate() {
        let rank = localEvictionCandidate().map { LoopHandle.encode($0.rank) } ?? .max
        handle.oldestCandidate.store(rank, ordering: .relaxed)
    }

    /// Takes the main listeners out of epoll: they stay readable while the backlog holds a connection, and
    /// this loop would otherwise wake for them again and again until another loop has made room.
    private func pauseAccepting() {
        guard !handle.acceptPaused.load(ordering: .relaxed) else { return }
        for listener in listeners where listener.role == .main && listener.fd >= 0 { epoll.remove(listener.fd) }
        handle.acceptPaused.store(true, ordering: .relaxed)
    }

    private func resumeAccepting() {
        guard handle.acceptPaused.load(ordering: .relaxed) else { return }
        handle.acceptPaused.store(false, ordering: .relaxed)
        for (position, listener) in listeners.enumerated() where listener.role == .main && listener.fd >= 0 {
            try? epoll.addShared(listener.fd, token: EventLoop.listenerTokenBase + UInt64(position))
        }
    }
}
