extension QRCode {
    /// Two module rows per text line with half blocks, a quiet zone of four modules. `dark` is how a dark
    /// module must look: in a terminal, ANSI colours make it black on white whatever the theme; elsewhere
    /// (a file, a log) a block character is the dark module.
    public func text(ansi: Bool) -> String {
        let quiet = 4
        let span = size + 2 * quiet
        func dark(_ x: Int, _ y: Int) -> Bool {
            let (mx, my) = (x - quiet, y - quiet)
            return (0..<size).contains(mx) && (0..<size).contains(my) && modules[my][mx]
        }
        var out = ""
        for row in stride(from: 0, to: span, by: 2) {
            if ansi { out += "\u{1B}[30;47m" }
            for column in 0..<span {
                let top = dark(column, row)
                let bottom = row + 1 < span && dark(column, row + 1)
                switch (top, bottom) {
                case (true, true): out += "█"
                case (true, false): out += "▀"
                case (false, true): out += "▄"
                case (false, false): out += " "
                }
            }
            if ansi { out += "\u{1B}[0m" }
            out += "\n"
        }
        return out
    }
}
