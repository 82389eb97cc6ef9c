internal import CZlib

/// A zlib failure: the call and zlib's code.
public struct ZlibError: Error, Sendable, CustomStringConvertible {
    public var call: String
    public var code: Int32
    public var description: String { "\(call): zlib error \(code)" }
}

/// One-shot gzip of response bodies. Bodies are compressed once when a config loads, never per request,
/// so the best compression level costs nothing at serving time.
public enum Gzip {
    public static func compress(_ input: [UInt8], level: Int32 = 9) throws(ZlibError) -> [UInt8] {
        // 15 + 16: a gzip wrapper rather than zlib's (what Content-Encoding: gzip means).
        try deflate(input, level: level, windowBits: 15 + 16)
    }

    /// A zlib stream (RFC 1950), as PNG's image data is.
    public static func zlibStream(_ input: [UInt8], level: Int32 = 9) throws(ZlibError) -> [UInt8] {
        try deflate(input, level: level, windowBits: 15)
    }

    private static func deflate(_ input: [UInt8], level: Int32, windowBits: Int32) throws(ZlibError) -> [UInt8] {
        var stream = z_stream()
        let initResult = CZlib_deflateInit2(&stream, level, windowBits)
        guard initResult == Z_OK else { throw ZlibError(call: "deflateInit2", code: initResult) }
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(input.count))) + 32)
        var input = input
        let result = input.withUnsafeMutableBufferPointer { source in
            output.withUnsafeMutableBufferPointer { destination -> Int32 in
                stream.next_in = source.baseAddress
                stream.avail_in = uInt(source.count)
                stream.next_out = destination.baseAddress
                stream.avail_out = uInt(destination.count)
                return CZlib.deflate(&stream, Z_FINISH)
            }
        }
        guard result == Z_STREAM_END else { throw ZlibError(call: "deflate", code: result) }
        output.removeSubrange(Int(stream.total_out)...)
        return output
    }

    /// Inflates gzip or zlib data (tests and the `check` tool verify what was served).
    public static func decompress(_ input: [UInt8], limit: Int = 16 << 20) throws(ZlibError) -> [UInt8] {
        var stream = z_stream()
        let initResult = CZlib_inflateInit2(&stream, 15 + 32)
        guard initResult == Z_OK else { throw ZlibError(call: "inflateInit2", code: initResult) }
        defer { inflateEnd(&stream) }
        var input = input
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var status: Int32 = Z_OK
        input.withUnsafeMutableBufferPointer { source in
            stream.next_in = source.baseAddress
            stream.avail_in = uInt(source.count)
            while status == Z_OK {
                chunk.withUnsafeMutableBufferPointer { destination in
                    stream.next_out = destination.baseAddress
                    stream.avail_out = uInt(destination.count)
                    status = inflate(&stream, Z_NO_FLUSH)
                    output += destination[0..<(destination.count - Int(stream.avail_out))]
                }
                if output.count > limit { status = Z_BUF_ERROR }
            }
        }
        guard status == Z_STREAM_END else { throw ZlibError(call: "inflate", code: status) }
        return output
    }
}
