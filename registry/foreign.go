package registry

// QuarantineFile moves a damaged file that another layer keeps under the store root (the
// learner's knowledge/<domain>.yaml) to quarantine/, records why and tells OnQuarantine, exactly
// like the store's own files, so `forge quarantine ls` and `forge doctor` report it. Nothing is
// restored in its place. It returns the report (MovedTo says where the file went).
func (s *Store) QuarantineFile(path string, why error) QuarantineReport {
	return s.quarantine(path, why, "", nil)
}
