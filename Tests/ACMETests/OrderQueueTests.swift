import Testing

@testable import ACME

/// The two queues of orders and the rate limits of first orders, without a CA or a clock.
@Suite("Order queue")
struct OrderQueueTests {
    static let limits = OrderQueue.Limits(perHour: 6, perDomainPerWeek: 12, capacity: 100)

    @Test("Renewals go first, however many first orders wait; a name is queued once")
    func renewalsFirst() {
        var queue = OrderQueue(limits: Self.limits, now: 0)
        for index in 0..<50 { _ = queue.enqueue("n\(index).flood.test", .first) }
        #expect(queue.enqueue("shop.example.com", .renewal) == .queued)
        #expect(queue.enqueue("shop.example.com", .renewal) == .alreadyQueued)
        #expect(queue.next(now: 0) == .order("shop.example.com", .renewal))
        #expect(queue.next(now: 0) == .order("n0.flood.test", .first))
    }

    @Test(
        "With every worker but one busy on first orders, a worker starts only renewals; the waiting first orders keep their turn and allowance"
    )
    func workerKeptForRenewals() {
        var queue = OrderQueue(limits: Self.limits, now: 0)
        for index in 0..<3 { _ = queue.enqueue("n\(index).flood.test", .first) }
        #expect(queue.next(now: 0, firstOrders: false) == .empty)
        _ = queue.enqueue("shop.example.com", .renewal)
        #expect(queue.next(now: 0, firstOrders: false) == .order("shop.example.com", .renewal))
        #expect(queue.rateLimited == 0 && queue.waitingFirstOrders == 3)
        #expect(queue.next(now: 0) == .order("n0.flood.test", .first), "the first in line, its allowance untouched")
    }

    @Test("First orders: at most the burst per registered domain, then one per refill; other domains go on; the overall limit holds")
    func rateLimits() {
        var queue = OrderQueue(limits: Self.limits, now: 0)
        for index in 0..<10 { _ = queue.enqueue("n\(index).flood.test", .first) }
        _ = queue.enqueue("a.other.test", .first)
        _ = queue.enqueue("b.other.example.co.uk", .first)
        var started: [String] = []
        while case .order(let host, _) = queue.next(now: 0) { started.append(host) }
        // flood.test's burst is 3 (a quarter of perDomainPerWeek), then other.test and co.uk go past the waiting ones.
        #expect(started == ["n0.flood.test", "n1.flood.test", "n2.flood.test", "a.other.test", "b.other.example.co.uk"])
        // One more flood.test name a week / 12 later.
        guard case .waitUntil(let until) = queue.next(now: 0) else {
            Issue.record("not rate limited")
            return
        }
        #expect(until == 50_400)
        #expect(queue.next(now: until) == .order("n3.flood.test", .first))
        #expect(queue.rateLimited >= 1)
        // Six an hour overall: many domains, one each, still six in the first hour.
        var overall = OrderQueue(limits: Self.limits, now: 0)
        for index in 0..<20 { _ = overall.enqueue("x.d\(index).test", .first) }
        var count = 0
        while case .order = overall.next(now: 0) { count += 1 }
        #expect(count == 6)
        #expect(overall.next(now: 0) == .waitUntil(600))
        #expect(overall.next(now: 600) == .order("x.d6.test", .first))
    }

    @Test("A full first-order queue drops and counts; renewals are never dropped")
    func bounded() {
        var queue = OrderQueue(limits: OrderQueue.Limits(perHour: 60, perDomainPerWeek: 40, capacity: 3), now: 0)
        for index in 0..<3 { #expect(queue.enqueue("n\(index).test", .first) == .queued) }
        #expect(queue.enqueue("n3.test", .first) == .dropped)
        #expect(queue.dropped == 1)
        #expect(queue.enqueue("renew.test", .renewal) == .queued)
        #expect(queue.count == 4 && queue.waitingFirstOrders == 3)
    }

    @Test("startsSoon: a renewal, or a first order within the tokens it would get; never one behind the limits; asking changes nothing")
    func startsSoon() {
        var queue = OrderQueue(limits: Self.limits, now: 0)
        for index in 0..<10 { _ = queue.enqueue("n\(index).d\(index).test", .first) }
        _ = queue.enqueue("shop.example.com", .renewal)
        #expect(queue.startsSoon("shop.example.com", now: 0))
        // Six tokens overall: the first six names start at once, the rest wait for the limits.
        #expect(
            (0..<10).map { queue.startsSoon("n\($0).d\($0).test", now: 0) } == Array(repeating: true, count: 6)
                + Array(repeating: false, count: 4)
        )
        #expect(!queue.startsSoon("not-queued.test", now: 0))
        #expect(queue.count == 11, "asking took nothing off the queue")
        // A domain whose burst is spent waits even at the head of the queue.
        var domain = OrderQueue(limits: Self.limits, now: 0)
        for index in 0..<4 { _ = domain.enqueue("n\(index).flood.test", .first) }
        for _ in 0..<3 { _ = domain.next(now: 0) }
        #expect(!domain.startsSoon("n3.flood.test", now: 0))
        #expect(domain.startsSoon("n3.flood.test", now: 50_400))
    }

    @Test("Registered domains: the last two labels")
    func registeredDomains() {
        #expect(RegisteredDomain.of("a.b.example.com") == "example.com")
        #expect(RegisteredDomain.of("example.com") == "example.com")
        #expect(RegisteredDomain.of("shop.example.co.uk") == "co.uk")
        #expect(RegisteredDomain.of("localhost") == "localhost")
    }
}
