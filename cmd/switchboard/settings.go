package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"
)

// scope says which commands read a setting.
type scope int

const (
	// scopeGlobal settings say where the database is: every command reads them.
	scopeGlobal scope = iota
	// scopeDomain settings shape the domain: serve and the commands that act through it (sim,
	// webhook) read them.
	scopeDomain
	// scopeServe settings concern the running server only (listeners, carriers, telemetry).
	scopeServe
)

// kind is a setting's type: how its text is read.
type kind int

const (
	kindString kind = iota
	kindBool
	kindInt
	kindFloat
	kindDuration
)

// setting is one configuration setting. It has up to four sources, the first present winning: its
// flag (--rate-limit), its variable (SWITCHBOARD_RATE_LIMIT), a file named by its _FILE variable
// (SWITCHBOARD_RATE_LIMIT_FILE, as container platforms mount secrets), and its key in the
// configuration file (rate_limit); otherwise it has its default.
type setting struct {
	// name is the flag's name; the variable and the file key derive from it.
	name string
	// def is the default, as text.
	def string
	// usage is the flag's help.
	usage string
	// scope says which commands read it.
	scope scope
	// secret settings have no flag, so that they show neither in the process list nor in help.
	secret bool
	// value holds the typed destination in the Config.
	value *settingValue
}

// env is the setting's environment variable.
func (s *setting) env() string {
	return "SWITCHBOARD_" + strings.ToUpper(strings.ReplaceAll(s.name, "-", "_"))
}

// key is the setting's key in the configuration file.
func (s *setting) key() string { return strings.ReplaceAll(s.name, "-", "_") }

// label names the setting in an error: its variable and, when it has one, its flag.
func (s *setting) label() string {
	if s.secret {
		return s.env()
	}
	return s.env() + " / --" + s.name
}

// settingValue is a pflag.Value that writes a typed Config field and says in plain words why a
// text is not a value of its kind.
type settingValue struct {
	kind kind
	dst  any
}

// String is the current value as text.
func (v *settingValue) String() string {
	switch d := v.dst.(type) {
	case *string:
		return *d
	case *bool:
		return strconv.FormatBool(*d)
	case *int:
		return strconv.Itoa(*d)
	case *float64:
		return strconv.FormatFloat(*d, 'f', -1, 64)
	case *time.Duration:
		return formatDuration(*d)
	}
	return ""
}

// Set reads s into the destination.
func (v *settingValue) Set(s string) error {
	switch d := v.dst.(type) {
	case *string:
		*d = s
	case *bool:
		b, err := strconv.ParseBool(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("%q is not true or false", s)
		}
		*d = b
	case *int:
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("%q is not an integer", s)
		}
		*d = n
	case *float64:
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", s)
		}
		*d = f
	case *time.Duration:
		t, err := parseDuration(s)
		if err != nil {
			return err
		}
		*d = t
	default:
		return fmt.Errorf("setting of unknown type %T", v.dst)
	}
	return nil
}

// Type names the kind in help output.
func (v *settingValue) Type() string {
	return [...]string{"string", "bool", "int", "float", "duration"}[v.kind]
}

// parseDuration reads a Go duration (90s, 5m, 1h30m) or a number of days (30d).
func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n >= 0 {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration such as 500ms, 30s, 5m, 12h or 30d", s)
	}
	return d, nil
}

// formatDuration writes whole days as 30d, anything else as Go does.
func formatDuration(d time.Duration) string {
	if d > 0 && d%(24*time.Hour) == 0 {
		return strconv.Itoa(int(d/(24*time.Hour))) + "d"
	}
	return d.String()
}

// settings is the table of every setting of an installation, bound to c's fields.
type settings []*setting

// byName finds a setting by its flag name.
func (ss settings) byName(name string) *setting {
	for _, s := range ss {
		if s.name == name {
			return s
		}
	}
	return nil
}

// setDefaults gives every setting its default.
func (ss settings) setDefaults() {
	for _, s := range ss {
		if err := s.value.Set(s.def); err != nil {
			panic(fmt.Sprintf("setting %s: default %q: %v", s.name, s.def, err))
		}
	}
}

// register adds the flags of the settings of scope sc to fs.
func (ss settings) register(fs *pflag.FlagSet, sc scope) {
	for _, s := range ss {
		if s.scope != sc || s.secret {
			continue
		}
		fs.Var(s.value, s.name, s.usage+" ("+s.env()+")")
		if s.value.kind == kindBool {
			fs.Lookup(s.name).NoOptDefVal = "true"
		}
	}
}

// configFile is a parsed configuration file: setting keys to their values as text.
type configFile struct {
	path   string
	values map[string]string
}

// readConfigFile reads a YAML file of setting keys (listen: 0.0.0.0:8443). A key that is not a
// setting is refused, naming it: a typo would otherwise be ignored.
func readConfigFile(path string, ss settings) (*configFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--config / SWITCHBOARD_CONFIG: %w", err)
	}
	var raw map[string]any
	if err := yaml.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("configuration file %s is not YAML of setting: value lines: %w", path, err)
	}
	f := &configFile{path: path, values: map[string]string{}}
	keys := make([]string, 0, len(ss))
	for _, s := range ss {
		keys = append(keys, s.key())
	}
	for k, v := range raw {
		if !slices.Contains(keys, k) {
			return nil, fmt.Errorf("configuration file %s: %q is not a setting%s; the settings are listed by 'switchboard serve --help'",
				path, k, suggest(k, keys))
		}
		switch t := v.(type) {
		case nil:
			f.values[k] = ""
		case []any:
			parts := make([]string, len(t))
			for i, p := range t {
				parts[i] = fmt.Sprint(p)
			}
			f.values[k] = strings.Join(parts, ",")
		case map[string]any:
			return nil, fmt.Errorf("configuration file %s: %s: give a single value or a list, not a mapping", path, k)
		default:
			f.values[k] = fmt.Sprint(t)
		}
	}
	return f, nil
}

// load fills every setting that wanted selects and whose flag was not given, from its variable,
// its _FILE variable or the configuration file, in that order; fs holds the parsed flags.
func (ss settings) load(fs *pflag.FlagSet, file *configFile, wanted func(*setting) bool) error {
	for _, s := range ss {
		if !wanted(s) {
			continue
		}
		if f := fs.Lookup(s.name); f != nil && f.Changed {
			continue
		}
		text, source, ok, err := s.lookup(file)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if err := s.value.Set(text); err != nil {
			return fmt.Errorf("%s%s: %w", s.label(), source, err)
		}
	}
	return nil
}

// lookup finds the setting's text outside the command line; source says where, for errors.
func (s *setting) lookup(file *configFile) (text, source string, ok bool, err error) {
	v, inEnv := os.LookupEnv(s.env())
	path, inFile := os.LookupEnv(s.env() + "_FILE")
	switch {
	case inEnv && inFile:
		return "", "", false, fmt.Errorf("%s and %s_FILE are both set: keep one", s.env(), s.env())
	case inEnv:
		return v, "", true, nil
	case inFile:
		b, err := os.ReadFile(path)
		if err != nil {
			return "", "", false, fmt.Errorf("%s_FILE: %w", s.env(), err)
		}
		// A mounted secret usually ends with a newline that is not part of it.
		return strings.TrimRight(string(b), "\r\n"), " (from " + s.env() + "_FILE)", true, nil
	}
	if file != nil {
		if v, ok := file.values[s.key()]; ok {
			return v, " (" + s.key() + " in " + file.path + ")", true, nil
		}
	}
	return "", "", false, nil
}

// otherVariables are SWITCHBOARD_ variables that are not settings but are known.
var otherVariables = []string{"SWITCHBOARD_CONFIG", "SWITCHBOARD_TEST_DATABASE_URL"}

// unknownVariables names the SWITCHBOARD_ variables of the environment that no setting reads,
// each with the setting it may be a typo of.
func (ss settings) unknownVariables() []string {
	known := slices.Clone(otherVariables)
	for _, s := range ss {
		known = append(known, s.env(), s.env()+"_FILE")
	}
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "SWITCHBOARD_") && !slices.Contains(known, name) {
			out = append(out, name+" is not a setting and is ignored"+suggest(name, known))
		}
	}
	sort.Strings(out)
	return out
}

// suggest says which of candidates word is likely a typo of, if any is close.
func suggest(word string, candidates []string) string {
	best, bestDist := "", 4
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(word), strings.ToLower(c)); d < bestDist {
			best, bestDist = c, d
		}
	}
	if best == "" {
		return ""
	}
	return " (did you mean " + best + "?)"
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// errSetting is a refusal of a setting's value: label names it, the message says what to do.
func errSetting(s *setting, format string, args ...any) error {
	return errors.New(s.label() + ": " + fmt.Sprintf(format, args...))
}
