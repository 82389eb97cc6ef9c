import Synchronization
import Testing

@testable import AASA

@Suite("A document's gzip form, made when first needed")
struct GzipFormTests {
    /// A stand-in compressor that counts its calls: recognisably made from its input.
    final class Compressor: Sendable {
        let calls = Atomic(0)
        func compress(_ bytes: [UInt8]) -> [UInt8] {
            calls.add(1, ordering: .relaxed)
            return Array("gz:".utf8) + bytes.reversed()
        }
    }

    @Test("A pending form is made by the first caller, kept for every later one, and lets the document go")
    func madeOnce() throws {
        let compressor = Compressor()
        weak var document: ImmutableBytes.Storage?
        let form: GzipForm
        do {
            let source = ImmutableBytes.copy(Array("{\"applinks\":{}}".utf8))
            document = source.owner
            form = GzipForm(of: source, compress: compressor.compress)
        }
        #expect(!form.isMade && compressor.calls.load(ordering: .relaxed) == 0, "creating the form compresses nothing")
        #expect(document != nil)
        let first = form.bytes()
        #expect(first.array == Array("gz:".utf8) + Array("{\"applinks\":{}}".utf8).reversed())
        #expect(form.isMade)
        #expect(form.bytes().isSame(as: first))
        #expect(compressor.calls.load(ordering: .relaxed) == 1)
        #expect(document == nil, "the document is let go once its form is made")
    }

    @Test("Callers on many threads at once all get the one form kept")
    func concurrentCallers() async throws {
        let compressor = Compressor()
        let form = GzipForm(of: ImmutableBytes.copy(Array(repeating: UInt8(ascii: "a"), count: 50_000)), compress: compressor.compress)
        let owners = await withTaskGroup(of: ImmutableBytes.self) { group in
            for _ in 0..<8 { group.addTask { form.bytes() } }
            return await group.reduce(into: [ImmutableBytes]()) { $0.append($1) }
        }
        #expect(owners.count == 8)
        #expect(owners.allSatisfy { $0.isSame(as: owners[0]) })
        #expect(form.bytes().isSame(as: owners[0]))
        let calls = compressor.calls.load(ordering: .relaxed)
        #expect(calls >= 1 && calls <= 8)
    }

    @Test("A form made before is returned as it is, never compressed again; an empty one says compressing does not pay")
    func madeBefore() {
        let compressor = Compressor()
        let kept = ImmutableBytes.copy(Array("kept".utf8))
        let form = GzipForm(made: kept)
        #expect(form.isMade && form.bytes().isSame(as: kept))
        let nothing = GzipForm(of: ImmutableBytes.copy(Array("{}".utf8))) { _ in [] }
        #expect(nothing.bytes().count == 0 && nothing.isMade)
        #expect(compressor.calls.load(ordering: .relaxed) == 0)
    }
}
