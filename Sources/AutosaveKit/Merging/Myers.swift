extension LineMerge {
    /// Myers' O(ND) difference algorithm in linear space (divide and conquer on the middle snake), after GNU diff's
    /// `diffseq`, including its cost cut-off: past a cost of `tooExpensive` a subproblem is split at the best point
    /// found so far, trading minimality for bounded time on pathological inputs.
    struct Myers {
        private let xv: UnsafeMutablePointer<Int>
        private let yv: UnsafeMutablePointer<Int>
        private let xChanged: UnsafeMutablePointer<Bool>
        private let yChanged: UnsafeMutablePointer<Bool>
        /// Furthest-reaching x per diagonal `k = x - y`, at index `k + offset`, for the forward search.
        private let fd: UnsafeMutablePointer<Int>
        /// The same for the backward search.
        private let bd: UnsafeMutablePointer<Int>
        private let offset: Int
        private let xCount: Int
        private let yCount: Int
        private let tooExpensive: Int

        private struct Job {
            var xoff: Int
            var xlim: Int
            var yoff: Int
            var ylim: Int
            var minimal: Bool
        }

        private struct Partition {
            var xmid: Int
            var ymid: Int
            var loMinimal: Bool
            var hiMinimal: Bool
        }

        /// Which elements of `x` and of `y` are not part of the common subsequence found.
        static func changes(_ x: [Int], _ y: [Int], costLimit: Int?) -> (x: [Bool], y: [Bool]) {
            let n = x.count
            let m = y.count
            let diagonals = n + m + 3
            let xv = UnsafeMutablePointer<Int>.allocate(capacity: n + 1)
            let yv = UnsafeMutablePointer<Int>.allocate(capacity: m + 1)
            let xChanged = UnsafeMutablePointer<Bool>.allocate(capacity: n + 1)
            let yChanged = UnsafeMutablePointer<Bool>.allocate(capacity: m + 1)
            let fd = UnsafeMutablePointer<Int>.allocate(capacity: diagonals)
            let bd = UnsafeMutablePointer<Int>.allocate(capacity: diagonals)
            defer {
                xv.deallocate()
                yv.deallocate()
                xChanged.deallocate()
                yChanged.deallocate()
                fd.deallocate()
                bd.deallocate()
            }
            _ = UnsafeMutableBufferPointer(start: xv, count: n).initialize(from: x)
            _ = UnsafeMutableBufferPointer(start: yv, count: m).initialize(from: y)
            xChanged.initialize(repeating: false, count: n + 1)
            yChanged.initialize(repeating: false, count: m + 1)
            fd.initialize(repeating: -1, count: diagonals)
            bd.initialize(repeating: Int.max, count: diagonals)

            // As git's xdiff: about the square root of the problem size, but never below 256.
            var tooExpensive = 1
            var remaining = n + m + 3
            while remaining != 0 {
                remaining >>= 2
                tooExpensive <<= 1
            }
            let myers = Myers(
                xv: xv, yv: yv, xChanged: xChanged, yChanged: yChanged, fd: fd, bd: bd, offset: m + 1,
                xCount: n, yCount: m, tooExpensive: max(1, costLimit ?? max(256, tooExpensive)))
            myers.run()

            let xResult = Array(UnsafeBufferPointer(start: xChanged, count: n))
            let yResult = Array(UnsafeBufferPointer(start: yChanged, count: m))
            return (xResult, yResult)
        }

        private func run() {
            var jobs = [Job(xoff: 0, xlim: xCount, yoff: 0, ylim: yCount, minimal: false)]
            while let job = jobs.popLast() {
                var xoff = job.xoff
                var xlim = job.xlim
                var yoff = job.yoff
                var ylim = job.ylim
                // Slide along the common prefix and suffix.
                while xoff < xlim && yoff < ylim && xv[xoff] == yv[yoff] {
                    xoff += 1
                    yoff += 1
                }
                while xoff < xlim && yoff < ylim && xv[xlim - 1] == yv[ylim - 1] {
                    xlim -= 1
                    ylim -= 1
                }
                if xoff == xlim || yoff == ylim {
                    markChanged(xoff, xlim, yoff, ylim)
                    continue
                }
                let part = split(xoff, xlim, yoff, ylim, minimal: job.minimal)
                let isInside = xoff <= part.xmid && part.xmid <= xlim && yoff <= part.ymid && part.ymid <= ylim
                let isProper = (part.xmid, part.ymid) != (xoff, yoff) && (part.xmid, part.ymid) != (xlim, ylim)
                guard isInside && isProper else {
                    // Cannot happen; if it did, a coarser but still correct answer beats looping forever.
                    markChanged(xoff, xlim, yoff, ylim)
                    continue
                }
                jobs.append(Job(xoff: part.xmid, xlim: xlim, yoff: part.ymid, ylim: ylim, minimal: part.hiMinimal))
                jobs.append(Job(xoff: xoff, xlim: part.xmid, yoff: yoff, ylim: part.ymid, minimal: part.loMinimal))
            }
        }

        private func markChanged(_ xoff: Int, _ xlim: Int, _ yoff: Int, _ ylim: Int) {
            var index = xoff
            while index < xlim {
                xChanged[index] = true
                index += 1
            }
            index = yoff
            while index < ylim {
                yChanged[index] = true
                index += 1
            }
        }

        /// Finds the midpoint of a shortest edit script for `x[xoff..<xlim]` and `y[yoff..<ylim]` (both non-empty),
        /// or, past the cost cut-off and unless `minimal`, a good enough split point.
        private func split(_ xoff: Int, _ xlim: Int, _ yoff: Int, _ ylim: Int, minimal: Bool) -> Partition {
            let dmin = xoff - ylim
            let dmax = xlim - yoff
            let fmid = xoff - yoff
            let bmid = xlim - ylim
            var fmin = fmid
            var fmax = fmid
            var bmin = bmid
            var bmax = bmid
            let odd = (fmid - bmid) & 1 != 0
            let fd = self.fd + offset
            let bd = self.bd + offset

            fd[fmid] = xoff
            bd[bmid] = xlim
            var cost = 1
            while true {
                // Extend the forward search by one edit on each diagonal.
                if fmin > dmin {
                    fmin -= 1
                    fd[fmin - 1] = -1
                } else {
                    fmin += 1
                }
                if fmax < dmax {
                    fmax += 1
                    fd[fmax + 1] = -1
                } else {
                    fmax -= 1
                }
                var d = fmax
                while d >= fmin {
                    let tlo = fd[d - 1]
                    let thi = fd[d + 1]
                    let x0 = tlo < thi ? thi : tlo + 1
                    var x = x0
                    var y = x0 - d
                    while x < xlim && y < ylim && xv[x] == yv[y] {
                        x += 1
                        y += 1
                    }
                    fd[d] = x
                    if odd && bmin <= d && d <= bmax && bd[d] <= x {
                        return Partition(xmid: x, ymid: y, loMinimal: true, hiMinimal: true)
                    }
                    d -= 2
                }

                // Extend the backward search likewise.
                if bmin > dmin {
                    bmin -= 1
                    bd[bmin - 1] = Int.max
                } else {
                    bmin += 1
                }
                if bmax < dmax {
                    bmax += 1
                    bd[bmax + 1] = Int.max
                } else {
                    bmax -= 1
                }
                d = bmax
                while d >= bmin {
                    let tlo = bd[d - 1]
                    let thi = bd[d + 1]
                    let x0 = tlo < thi ? tlo : thi - 1
                    var x = x0
                    var y = x0 - d
                    while xoff < x && yoff < y && xv[x - 1] == yv[y - 1] {
                        x -= 1
                        y -= 1
                    }
                    bd[d] = x
                    if !odd && fmin <= d && d <= fmax && x <= fd[d] {
                        return Partition(xmid: x, ymid: y, loMinimal: true, hiMinimal: true)
                    }
                    d -= 2
                }

                if !minimal && cost >= tooExpensive {
                    return bestSoFar(
                        xoff, xlim, yoff, ylim, fd: fd, bd: bd, forward: (fmin, fmax), backward: (bmin, bmax))
                }
                cost += 1
            }
        }

        /// The furthest point reached so far by either search, as a split point that is not necessarily optimal.
        private func bestSoFar(
            _ xoff: Int, _ xlim: Int, _ yoff: Int, _ ylim: Int,
            fd: UnsafeMutablePointer<Int>, bd: UnsafeMutablePointer<Int>,
            forward: (lowest: Int, highest: Int), backward: (lowest: Int, highest: Int)
        ) -> Partition {
            // The forward diagonal that maximizes x + y.
            var fxybest = -1
            var fxbest = xoff
            var d = forward.highest
            while d >= forward.lowest {
                var x = min(fd[d], xlim)
                var y = x - d
                if ylim < y {
                    x = ylim + d
                    y = ylim
                }
                if fxybest < x + y {
                    fxybest = x + y
                    fxbest = x
                }
                d -= 2
            }
            // The backward diagonal that minimizes x + y.
            var bxybest = Int.max
            var bxbest = xlim
            d = backward.highest
            while d >= backward.lowest {
                var x = max(xoff, bd[d])
                var y = x - d
                if y < yoff {
                    x = yoff + d
                    y = yoff
                }
                if x + y < bxybest {
                    bxybest = x + y
                    bxbest = x
                }
                d -= 2
            }
            if (xlim + ylim) - bxybest < fxybest - (xoff + yoff) {
                return Partition(xmid: fxbest, ymid: fxybest - fxbest, loMinimal: true, hiMinimal: false)
            }
            return Partition(xmid: bxbest, ymid: bxybest - bxbest, loMinimal: false, hiMinimal: true)
        }
    }
}
