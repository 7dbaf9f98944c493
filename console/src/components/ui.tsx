import type { ComponentChildren, Ref } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';

/*
 * The console's building blocks. Every control has a visible label tied to it (for=/id), errors are
 * announced and linked to their field (aria-invalid, aria-describedby), and nothing needs a mouse.
 */

interface FieldProps {
  label: string;
  error?: string | undefined;
  hint?: string;
  children: (props: { id: string; 'aria-invalid'?: 'true'; 'aria-describedby'?: string }) => ComponentChildren;
}

function Field({ label, error, hint, children }: FieldProps) {
  const id = useId();
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <div class={`field${error ? ' field-invalid' : ''}`}>
      <label for={id}>{label}</label>
      {children({
        id,
        ...(error ? { 'aria-invalid': 'true' as const } : {}),
        ...(described ? { 'aria-describedby': described } : {}),
      })}
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {error && (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </div>
  );
}

/** What the console's text inputs use of <input>'s attributes. */
interface InputProps {
  value: string;
  onValue(value: string): void;
  name?: string;
  type?: 'text' | 'password' | 'search' | 'url' | 'number' | 'datetime-local' | 'date';
  required?: boolean;
  placeholder?: string;
  autoComplete?: string;
  inputMode?: 'numeric' | 'text';
  min?: number;
  max?: number;
}

export function TextField({
  label,
  error,
  hint,
  value,
  onValue,
  type = 'text',
  ...rest
}: { label: string; error?: string | undefined; hint?: string } & InputProps) {
  return (
    <Field label={label} error={error} {...(hint ? { hint } : {})}>
      {(aria) => (
        // Preact's types pair attributes with one input type at a time; InputProps states what these inputs take.
        <input
          {...rest}
          {...aria}
          type={type as 'text'}
          value={value}
          onInput={(event) => onValue(event.currentTarget.value)}
        />
      )}
    </Field>
  );
}

export function TextArea({
  label,
  error,
  hint,
  value,
  onValue,
  rows = 6,
}: {
  label: string;
  error?: string | undefined;
  hint?: string;
  value: string;
  onValue(value: string): void;
  rows?: number;
}) {
  return (
    <Field label={label} error={error} {...(hint ? { hint } : {})}>
      {(aria) => (
        <textarea
          {...aria}
          class="code"
          rows={rows}
          spellcheck={false}
          value={value}
          onInput={(event) => onValue(event.currentTarget.value)}
        />
      )}
    </Field>
  );
}

/** A file to read in the page (a sync's desired state); `onFile` gets the chosen file, or null when none is. */
export function FileField({
  label,
  hint,
  error,
  accept,
  inputRef,
  onFile,
}: {
  label: string;
  hint?: string;
  error?: string | undefined;
  accept: string;
  /** The input itself, for a drop zone around it to show the file dropped there as chosen. */
  inputRef?: Ref<HTMLInputElement>;
  onFile(file: File | null): void;
}) {
  return (
    <Field label={label} error={error} {...(hint ? { hint } : {})}>
      {(aria) => (
        <input
          {...aria}
          ref={inputRef}
          type="file"
          accept={accept}
          onChange={(event) => onFile(event.currentTarget.files?.[0] ?? null)}
        />
      )}
    </Field>
  );
}

export function Select<V extends string>({
  label,
  value,
  options,
  onValue,
  error,
}: {
  label: string;
  value: V;
  options: ReadonlyArray<readonly [V, string]>;
  onValue(value: V): void;
  error?: string | undefined;
}) {
  return (
    <Field label={label} error={error}>
      {(aria) => (
        <select {...aria} value={value} onChange={(event) => onValue(event.currentTarget.value as V)}>
          {options.map(([option, text]) => (
            <option key={option} value={option}>
              {text}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

export function Checkbox({
  label,
  checked,
  onChecked,
}: {
  label: string;
  checked: boolean;
  onChecked(checked: boolean): void;
}) {
  const id = useId();
  return (
    <div class="checkbox">
      <input id={id} type="checkbox" checked={checked} onChange={(event) => onChecked(event.currentTarget.checked)} />
      <label for={id}>{label}</label>
    </div>
  );
}

/** A failure that belongs to no single field, shown above the form and announced. */
export function Alert({
  children,
  kind = 'error',
}: {
  children: ComponentChildren;
  kind?: 'error' | 'success' | 'info';
}) {
  return (
    <div class={`alert alert-${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      {children}
    </div>
  );
}

/** The heading every screen starts with; it takes the focus after a navigation, so screen readers announce the new page. */
export function PageHeader({ title, children }: { title: string; children?: ComponentChildren }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · User Group Service console`;
    heading.current?.focus();
  }, [title]);
  return (
    <header class="page-header">
      <h1 ref={heading} tabIndex={-1}>
        {title}
      </h1>
      {children && <div class="page-actions">{children}</div>}
    </header>
  );
}

export function Section({
  title,
  children,
  actions,
}: {
  title: string;
  children: ComponentChildren;
  actions?: ComponentChildren;
}) {
  const id = useId();
  return (
    <section class="card" aria-labelledby={id}>
      <div class="card-header">
        <h2 id={id}>{title}</h2>
        {actions}
      </div>
      {children}
    </section>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="muted" role="status">
      Loading {what}…
    </p>
  );
}

/** Previous and next page of a cursor-paginated list. */
export function Pager({
  number,
  previous,
  next,
  label,
}: {
  number: number;
  previous: (() => void) | undefined;
  next: (() => void) | undefined;
  label: string;
}) {
  if (!previous && !next) return null;
  return (
    <nav class="pager" aria-label={`${label} pages`}>
      <button type="button" class="secondary" disabled={!previous} onClick={previous}>
        Previous
      </button>
      <span>Page {number}</span>
      <button type="button" class="secondary" disabled={!next} onClick={next}>
        Next
      </button>
    </nav>
  );
}

/** A timestamp in the reader's locale, with the exact value on hover and for machines. */
export function Time({ at }: { at: string | null | undefined }) {
  if (!at) return <span class="muted">—</span>;
  return (
    <time dateTime={at} title={at}>
      {new Date(at).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })}
    </time>
  );
}

export function Json({ value, label }: { value: unknown; label: string }) {
  return (
    <pre class="json" aria-label={label} tabIndex={0}>
      {JSON.stringify(value, null, 2)}
    </pre>
  );
}

export function Badge({
  children,
  tone = 'neutral',
}: {
  children: ComponentChildren;
  tone?: 'neutral' | 'good' | 'warn' | 'bad' | 'accent';
}) {
  return <span class={`badge badge-${tone}`}>{children}</span>;
}

/** A secret shown once (a new API token, a webhook secret): copy it now, it is not shown again. */
export function OnceSecret({ title, secret, onDone }: { title: string; secret: string; onDone(): void }) {
  const [copied, setCopied] = useState(false);
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => box.current?.focus(), []);
  return (
    <div class="once-secret" role="region" aria-label={title} tabIndex={-1} ref={box}>
      <p>
        <strong>{title}.</strong> Copy it now: it is shown only this once.
      </p>
      <code class="secret-value" data-testid="once-secret">
        {secret}
      </code>
      <div class="row">
        <button
          type="button"
          class="secondary"
          onClick={() =>
            void navigator.clipboard?.writeText(secret).then(
              () => setCopied(true),
              () => undefined,
            )
          }
        >
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" onClick={onDone}>
          I have stored it
        </button>
      </div>
    </div>
  );
}

/** The submit button at the end of a one-line form, aligned with the fields beside it. */
export function InlineSubmit({ label, busy }: { label: string; busy: boolean }) {
  return (
    <div class="inline-submit">
      <button type="submit" disabled={busy}>
        {label}
      </button>
    </div>
  );
}
