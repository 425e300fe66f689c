// "New scheduler from template": a select of the simulator's script templates, in the column bar and the policy
// editor. Kept apart from the policy editor so the page's first download does not carry the editor.
import type { ScriptTemplate } from '../lib/script';

/** "New scheduler from template": one more scripted column, running a copy of the template. */
export function TemplateMenu({
  templates,
  onNew,
}: {
  templates: readonly ScriptTemplate[] | null;
  onNew: (template: ScriptTemplate) => void;
}) {
  return (
    <select
      aria-label="New scheduler from template"
      data-testid="script-template"
      value=""
      disabled={!templates || templates.length === 0}
      onChange={(e) => {
        const t = templates?.find((x) => x.id === e.target.value);
        if (t) onNew(t);
      }}
    >
      <option value="">New scheduler from template…</option>
      {templates?.map((t) => (
        <option key={t.id} value={t.id} title={t.description}>
          {t.title}
        </option>
      ))}
    </select>
  );
}
