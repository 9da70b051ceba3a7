package seccomp

// personality(2) is allowed for the values ordinary programs pass and refused
// for the rest, which would turn off ASLR (ADDR_NO_RANDOMIZE), make data
// executable (READ_IMPLIES_EXEC), map page zero (MMAP_PAGE_ZERO) or change the
// address-space layout:
//
//	0xffffffff                the query; the kernel changes nothing
//	PER_LINUX (0)             the default
//	PER_LINUX32 (0x0008)      linux32, setarch i686
//	UNAME26 (0x0020000)       setarch --uname-2.6, for software that parses uname
//	PER_LINUX32|UNAME26
//
// The kernel reads the argument as an unsigned int, so only the low 32 bits
// are compared.
const (
	personalityQuery = 0xffffffff
	// personalityKeep holds the bits an allowed value other than the query
	// may have set. No two of them may be neighbours (see personalityRules).
	personalityKeep = 0x0008 | 0x0020000
)

// personalityRules expresses "deny unless the argument is allowed" for a
// filter whose default is to allow. libseccomp cannot AND two comparisons of
// one argument nor negate one, so the refused values are covered by masked
// comparisons of two bits, one required set and one required clear. Such a
// pair never matches an allowed value as long as the set bit lies outside
// personalityKeep (which rules out 0, PER_LINUX32, UNAME26) and the clear bit
// exists (which rules out the query, all ones).
//
// Take the 32 bits as a ring, bit 31 followed by bit 0. A refused value v has
// a set bit b outside personalityKeep and a clear bit. Walk the ring from b
// to the first clear bit z; the bit y before z is set. If y is outside
// personalityKeep, the pair (y set, z clear) matches v. Otherwise y is not b,
// so the bit before y is set too, and outside personalityKeep as no two kept
// bits are neighbours: the pair (bit before y set, z clear) matches v. So
// one pair per bit outside personalityKeep (30) and one bridging each kept
// bit (2) refuse every value that is not allowed. TestPersonality checks
// both directions.
func personalityRules() []Rule {
	const (
		label = "personality(other than PER_LINUX, PER_LINUX32, UNAME26, query)"
		why   = "turns off ASLR or NX, maps page zero, changes the address-space layout"
	)
	bit := func(i int) uint64 { return 1 << ((i + 32) % 32) }
	var rs []Rule
	deny := func(set, clear uint64) {
		rs = append(rs, Rule{
			Syscall: "personality",
			Conds:   []Cond{{Arg: 0, Op: MaskedEqual, Mask: set | clear, Value: set}},
			Errno:   EPERM,
			Label:   label,
			Why:     why,
		})
	}
	for i := range 32 {
		if bit(i)&personalityKeep == 0 {
			deny(bit(i), bit(i+1))
		} else {
			deny(bit(i-1), bit(i+1))
		}
	}
	return rs
}
