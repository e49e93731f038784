import Foundation

/// A plain-text table with aligned columns, for human output.
///
/// ```text
/// _pk  tailNumber  seats  colorScheme.primary
/// 1    F-GSPT      180    red
/// ```
///
/// Numbers are right-aligned, everything else left-aligned; cells longer than
/// ``maxCellWidth`` characters are cut with `…` (use `--json` for full values).
struct TextTable {
    var headers: [String]
    var rows: [[String]] = []
    /// Columns whose cells are right-aligned (numbers).
    var rightAligned: Set<Int> = []
    var maxCellWidth = 60
    var indent = ""

    init(headers: [String], indent: String = "") {
        self.headers = headers
        self.indent = indent
    }

    mutating func append(_ row: [String]) { rows.append(row) }

    func render() -> String {
        let cells = ([headers] + rows).map { $0.map(clip) }
        var widths = Array(repeating: 0, count: headers.count)
        for row in cells {
            for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) }
        }
        var lines: [String] = []
        for row in cells {
            var parts: [String] = []
            for (i, cell) in row.enumerated() where i < widths.count {
                let pad = String(repeating: " ", count: widths[i] - cell.count)
                let isLast = i == widths.count - 1
                if rightAligned.contains(i) { parts.append(pad + cell) } else { parts.append(isLast ? cell : cell + pad) }
            }
            lines.append(indent + parts.joined(separator: "  "))
        }
        return lines.joined(separator: "\n")
    }

    private func clip(_ text: String) -> String {
        let oneLine = text.replacingOccurrences(of: "\n", with: "\\n").replacingOccurrences(of: "\t", with: "\\t")
        guard oneLine.count > maxCellWidth else { return oneLine }
        return String(oneLine.prefix(maxCellWidth - 1)) + "…"
    }
}
