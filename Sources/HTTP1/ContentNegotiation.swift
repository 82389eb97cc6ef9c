import Support

/// Whether `Accept-Encoding` allows gzip: listed (or `*`) with q > 0, and not refused by `gzip;q=0`.
func acceptsGzip(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
    var gzip: Bool?
    var wildcard: Bool?
    forEachToken(buffer, range) { token in
        var nameEnd = token.lowerBound
        while nameEnd < token.upperBound && buffer[nameEnd] != UInt8(ascii: ";") && buffer[nameEnd] != 0x20 && buffer[nameEnd] != 0x09 {
            nameEnd += 1
        }
        let accepted = qualityIsPositive(buffer, nameEnd..<token.upperBound)
        let name = token.lowerBound..<nameEnd
        if equalsLowercase(buffer, name, "gzip") || equalsLowercase(buffer, name, "x-gzip") {
            gzip = accepted
        } else if name.count == 1 && buffer[name.lowerBound] == UInt8(ascii: "*") {
            wildcard = accepted
        }
    }
    return gzip ?? wildcard ?? false
}

/// Parses `;q=0.5` parameters; anything but a zero weight accepts (RFC 9110 §12.4.2).
private func qualityIsPositive(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
    var index = range.lowerBound
    while index < range.upperBound {
        if buffer[index] == UInt8(ascii: "q") || buffer[index] == UInt8(ascii: "Q"), index + 1 < range.upperBound,
            buffer[index + 1] == UInt8(ascii: "=")
        {
            var position = index + 2
            var sawNonZero = false
            while position < range.upperBound && (ASCII.isDigit(buffer[position]) || buffer[position] == UInt8(ascii: ".")) {
                if ASCII.isDigit(buffer[position]) && buffer[position] != UInt8(ascii: "0") { sawNonZero = true }
                position += 1
            }
            return sawNonZero
        }
        index += 1
    }
    return true
}
