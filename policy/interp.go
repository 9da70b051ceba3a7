package policy

// inlineCode judges code given to an interpreter on its command line or
// stdin (python -c, node -e, perl -e, a here-document fed to python3).
func inlineCode(j *judge, lang, code string, static bool) {
	j.add(SafeWrite, 2, "runs inline %s code", lang)
}
