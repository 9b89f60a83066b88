"""Applies kyaml's compact sequence indent patch (sigs.k8s.io/yaml goyaml.v3) to go-yaml v3."""
import sys, os
d = sys.argv[1]
def edit(name, pairs):
    p = os.path.join(d, name); s = open(p).read()
    for old, new in pairs:
        assert old in s, (name, old[:60]); s = s.replace(old, new)
    open(p, 'w').write(s)
edit('emitterc.go', [('''func yaml_emitter_increase_indent(emitter *yaml_emitter_t, flow, indentless bool) bool {
	emitter.indents''', '''func yaml_emitter_increase_indent(emitter *yaml_emitter_t, flow, indentless bool) bool {
	return yaml_emitter_increase_indent_compact(emitter, flow, indentless, false)
}

func yaml_emitter_increase_indent_compact(emitter *yaml_emitter_t, flow, indentless bool, compact_seq bool) bool {
	emitter.indents'''), ('''			emitter.indent = emitter.best_indent*((emitter.indent+emitter.best_indent)/emitter.best_indent)
		}''', '''			emitter.indent = emitter.best_indent*((emitter.indent+emitter.best_indent)/emitter.best_indent)
			if compact_seq {
				emitter.indent = emitter.indent - 2
			}
		}'''), ('''func yaml_emitter_emit_block_sequence_item(emitter *yaml_emitter_t, event *yaml_event_t, first bool) bool {
	if first {
		if !yaml_emitter_increase_indent(emitter, false, false) {''', '''func yaml_emitter_emit_block_sequence_item(emitter *yaml_emitter_t, event *yaml_event_t, first bool) bool {
	if first {
		seq := emitter.mapping_context && (emitter.column == 0 || !emitter.indention) &&
			emitter.compact_sequence_indent
		if !yaml_emitter_increase_indent_compact(emitter, false, false, seq) {''')])
edit('yamlh.go', [('type yaml_emitter_t struct {\n', 'type yaml_emitter_t struct {\n\tcompact_sequence_indent bool\n')])
edit('yaml.go', [('// Close closes the encoder', '''func (e *Encoder) CompactSeqIndent() { e.encoder.emitter.compact_sequence_indent = true }
func (e *Encoder) DefaultSeqIndent() { e.encoder.emitter.compact_sequence_indent = false }

// Close closes the encoder''')])
