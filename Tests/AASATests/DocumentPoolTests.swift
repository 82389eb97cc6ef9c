import Dispatch
import Testing

@testable import AASA

/// Identical documents of one load, kept once, in a table of fixed size.
@Suite("The document pool")
struct DocumentPoolTests {
    static func document(_ number: Int) -> ImmutableBytes {
        ImmutableBytes.copy(
            Array(#"{"applinks":{"details":[{"appIDs":["ABCDE12345.com.example.shop"],"components":[{"/":"/p/\#(number)/*"}]}]}}"#.utf8)
        )
    }

    @Test("Copies of one document become the first copy; each of 200,000 different documents stays itself, its bytes intact")
    func sharesCopiesKeepsTheRest() {
        let pool = DocumentPool()
        let first = Self.document(7)
        #expect(pool.intern(first).isSame(as: first))
        for _ in 0..<100 {
            let copy = Self.document(7)
            #expect(pool.intern(copy).isSame(as: first))
        }
        // Far more documents than the table has slots: each comes back as itself (unshared) or as an earlier
        // copy of exactly its bytes, never as another document.
        for number in 0..<200_000 where number != 7 {
            let document = Self.document(number)
            let interned = pool.intern(document)
            #expect(interned.isSame(as: document), "\(number)")
        }
        // Still shared after all of them: the first document to reach a slot keeps it.
        #expect(pool.intern(Self.document(7)).isSame(as: first))
    }

    @Test("A document is handed out only for equal bytes; one whose slot another holds stays unshared")
    func onlyEqualBytes() {
        let pool = DocumentPool()
        let documents = (0..<5_000).map(Self.document)
        let interned = documents.map(pool.intern)
        var shared = 0
        for (index, copy) in (0..<5_000).map(Self.document).enumerated() {
            let kept = pool.intern(copy)
            #expect(kept.buffer.elementsEqual(documents[index].buffer))
            #expect(interned[index].isSame(as: documents[index]))
            // Either the first copy, which holds the slot, or (slot taken by another document) itself.
            #expect(kept.isSame(as: documents[index]) || kept.isSame(as: copy), "\(index)")
            if kept.isSame(as: documents[index]) { shared += 1 }
        }
        // 5,000 documents in 65,536 slots: a few hundred at most find their slot taken.
        #expect(shared >= 4_500, "\(shared) of 5,000 shared")
    }

    @Test("Loading threads interning at once agree: every copy of a document comes back as one and the same")
    func concurrent() {
        let pool = DocumentPool()
        let results = UnsafeMutableBufferPointer<ImmutableBytes?>.allocate(capacity: 8 * 2_000)
        results.initialize(repeating: nil)
        defer { results.deallocate() }
        nonisolated(unsafe) let shared = results
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for index in 0..<2_000 { shared[thread * 2_000 + index] = pool.intern(Self.document(index % 50)) }
        }
        var sharedDocuments = 0
        for index in 0..<50 {
            let copies = (0..<8).flatMap { thread in stride(from: index, to: 2_000, by: 50).map { shared[thread * 2_000 + $0]! } }
            #expect(copies.allSatisfy { $0.buffer.elementsEqual(Self.document(index).buffer) })
            if copies.allSatisfy({ $0.isSame(as: copies[0]) }) {
                sharedDocuments += 1
            } else {
                // Only a document whose slot another holds goes unshared, and then every copy is its own.
                let fresh = Self.document(index)
                #expect(pool.intern(fresh).isSame(as: fresh), "\(index)")
            }
        }
        #expect(sharedDocuments >= 45)
        pool.empty(parallel: nil)
        let after = Self.document(3)
        #expect(pool.intern(after).isSame(as: after), "emptied: the next copy is the first again")
    }
}
