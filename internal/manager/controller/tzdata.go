package controller

// The zone database compiled in (about 450 KB): spec.timeZone must work in the manager's image, which has no
// zoneinfo on disk (TestTimeZonesWithoutZoneinfo).
import _ "time/tzdata"
