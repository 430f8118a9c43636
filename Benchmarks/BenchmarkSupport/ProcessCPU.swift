import Foundation

/// CPU time of processes, from the kernel's own counters (`/proc/<pid>/stat`): what a process spent, not what
/// the load generator measured.
public enum ProcessCPU {
    public static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    /// The fields of `/proc/<pid>/stat` after the command name (which may hold spaces and parentheses).
    private static func fields(_ pid: Int32) -> [Substring]? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        return text[text.index(after: close)...].split(separator: " ")
    }

    /// CPU seconds in user space and in the kernel.
    public struct Split: Sendable {
        public var user = 0.0
        public var kernel = 0.0
        public var total: Double { user + kernel }

        public init(user: Double = 0, kernel: Double = 0) {
            self.user = user
            self.kernel = kernel
        }

        public static func - (lhs: Split, rhs: Split) -> Split { Split(user: lhs.user - rhs.user, kernel: lhs.kernel - rhs.kernel) }
        public static func + (lhs: Split, rhs: Split) -> Split { Split(user: lhs.user + rhs.user, kernel: lhs.kernel + rhs.kernel) }
        public static func += (lhs: inout Split, rhs: Split) { lhs = lhs + rhs }
    }

    /// User and system seconds of `pid` itself and of its children that have exited (0 when it is gone).
    public static func split(of pid: Int32) -> Split {
        // After the name: state(0) ppid(1) … utime(11) stime(12) cutime(13) cstime(14).
        guard let f = fields(pid), f.count > 14 else { return Split() }
        let ticks = [11, 12, 13, 14].map { Double(f[$0]) ?? 0 }
        return Split(user: (ticks[0] + ticks[2]) / ticksPerSecond, kernel: (ticks[1] + ticks[3]) / ticksPerSecond)
    }

    /// User + system seconds of `pid` itself and of its children that have exited (0 when it is gone).
    public static func seconds(of pid: Int32) -> Double { split(of: pid).total }

    /// User + system seconds of `pid` and of every live process below it (PostgreSQL's postmaster and its
    /// backends), plus what exited children spent.
    public static func treeSeconds(of root: Int32) -> Double { treeSplit(of: root).total }

    /// ``treeSeconds(of:)`` split into user space and the kernel.
    public static func treeSplit(of root: Int32) -> Split {
        var children: [Int32: [Int32]] = [:]
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for entry in entries {
            guard let pid = Int32(entry), let f = fields(pid), f.count > 1, let parent = Int32(f[1]) else { continue }
            children[parent, default: []].append(pid)
        }
        var total = Split()
        var stack = [root]
        var seen = Set<Int32>()
        while let pid = stack.popLast(), seen.insert(pid).inserted {
            total += split(of: pid)
            stack += children[pid] ?? []
        }
        return total
    }
}
