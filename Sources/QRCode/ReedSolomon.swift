/// Reed-Solomon over GF(256) with the QR polynomial x⁸+x⁴+x³+x²+1.
enum ReedSolomon {
    static func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
        var result = 0
        for shift in stride(from: 7, through: 0, by: -1) {
            result = (result << 1) ^ ((result >> 7) * 0x11D)
            result ^= ((Int(b) >> shift) & 1) * Int(a)
        }
        return UInt8(result & 0xFF)
    }

    /// The generator polynomial's coefficients (highest first, leading 1 left out).
    static func generator(degree: Int) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: degree)
        result[degree - 1] = 1
        var root: UInt8 = 1
        for _ in 0..<degree {
            for index in 0..<degree {
                result[index] = multiply(result[index], root)
                if index + 1 < degree { result[index] ^= result[index + 1] }
            }
            root = multiply(root, 0x02)
        }
        return result
    }

    static func remainder(_ data: [UInt8], divisor: [UInt8]) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: divisor.count)
        for byte in data {
            let factor = byte ^ result.removeFirst()
            result.append(0)
            for index in 0..<divisor.count { result[index] ^= multiply(divisor[index], factor) }
        }
        return result
    }
}
