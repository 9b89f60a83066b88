"""Applies kyaml's patches to go-yaml v3 (sigs.k8s.io/yaml goyaml.v3, the
fork kpt's kyaml uses): the compact sequence indent, and the line break
after a block scalar's header (go-yaml issue 755, not in Debian's 3.0.1:
a literal or folded value that starts with a line break keeps it)."""
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
edit('emitterc.go', [('''func yaml_emitter_process_line_comment(emitter *yaml_emitter_t) bool {
	if len(emitter.line_comment) == 0 {
		return true
	}''', '''func yaml_emitter_process_line_comment(emitter *yaml_emitter_t) bool {
	return yaml_emitter_process_line_comment_linebreak(emitter, false)
}

func yaml_emitter_process_line_comment_linebreak(emitter *yaml_emitter_t, linebreak bool) bool {
	if len(emitter.line_comment) == 0 {
		if linebreak && !put_break(emitter) {
			return false
		}
		return true
	}''')])
s = open(os.path.join(d, 'emitterc.go')).read()
for writer in ('literal', 'folded'):
    head = 'func yaml_emitter_write_%s_scalar(' % writer
    i = s.index(head)
    j = s.index('yaml_emitter_process_line_comment(emitter)', i)
    s = s[:j] + 'yaml_emitter_process_line_comment_linebreak(emitter, true)' + s[j + len('yaml_emitter_process_line_comment(emitter)'):]
open(os.path.join(d, 'emitterc.go'), 'w').write(s)
