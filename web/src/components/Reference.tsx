// The glossary panel and the about page (overlays), and Terms: a text whose glossary terms link to their entry
// at their first use in a view.
import { createContext, useContext, useEffect, useMemo, useRef, useState } from 'react';
import { findTerms, GLOSSARY } from '../lib/glossary';
import { Markdown } from './Markdown';

/** Opens the glossary at an entry (null: at the top). */
export const GlossaryContext = createContext<(id: string | null) => void>(() => {});

/** `text` with the first use of each glossary term (per `seen`, shared by the parts of one view) as a link. */
export function Terms({ text, seen }: { readonly text: string; readonly seen?: Set<string> }) {
  const open = useContext(GlossaryContext);
  // eslint-disable-next-line react-hooks/exhaustive-deps -- `seen` is the view's, fixed for its render
  const parts = useMemo(() => findTerms(text, seen), [text]);
  return (
    <>
      {parts.map((p, i) =>
        p.entry ? (
          <a
            key={i}
            href={`#glossary-${p.entry.id}`}
            className="term"
            data-testid="glossary-term"
            data-term={p.entry.id}
            title={`${p.entry.term}: ${p.entry.text}`}
            onClick={(e) => {
              e.preventDefault();
              open(p.entry!.id);
            }}
          >
            {p.text}
          </a>
        ) : (
          <span key={i}>{p.text}</span>
        ),
      )}
    </>
  );
}

/** An overlay's Close button, focused when the overlay opens (Escape closes it too). */
function Close({ testId, onClose }: { testId: string; onClose: () => void }) {
  const ref = useRef<HTMLButtonElement>(null);
  useEffect(() => ref.current?.focus({ preventScroll: true }), []);
  return (
    <button type="button" ref={ref} data-testid={testId} onClick={onClose}>
      Close
    </button>
  );
}

function Overlay({
  title,
  testId,
  close,
  onClose,
  children,
}: {
  title: string;
  /** The overlay's test id. */
  testId: string;
  /** Its Close button, its test id written where the overlay is used (docs/test-hooks.md's check reads it there). */
  close: React.ReactNode;
  onClose: () => void;
  children: React.ReactNode;
}) {
  return (
    <div
      className="overlay"
      role="dialog"
      aria-modal="true"
      aria-labelledby={`${testId}-title`}
      onKeyDown={(e) => e.key === 'Escape' && onClose()}
    >
      <section className="overlay-box" data-testid={testId}>
        <header className="overlay-head">
          <h2 id={`${testId}-title`}>{title}</h2>
          {close}
        </header>
        {children}
      </section>
    </div>
  );
}

export function Glossary({ at, onClose }: { readonly at: string | null; readonly onClose: () => void }) {
  useEffect(() => {
    if (!at) return;
    const el = document.getElementById(`glossary-${at}`);
    el?.scrollIntoView({ block: 'center' });
    el?.focus({ preventScroll: true });
  }, [at]);
  return (
    <Overlay
      title="Glossary"
      testId="glossary"
      close={<Close testId="glossary-close" onClose={onClose} />}
      onClose={onClose}
    >
      <dl>
        {GLOSSARY.map((g) => (
          <div key={g.id} id={`glossary-${g.id}`} tabIndex={-1} data-current={g.id === at || undefined}>
            <dt>{g.term}</dt>
            <dd>{g.text}</dd>
          </div>
        ))}
      </dl>
    </Overlay>
  );
}

/**
 * The fidelity table (docs/fidelity.md, served beside the page and cached for offline use) rendered in the page:
 * the raw file would download or show as plain text.
 */
function FidelityDoc({ onClose }: { readonly onClose: () => void }) {
  const [text, setText] = useState<string | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    fetch('fidelity.md')
      .then((r) => (r.ok ? r.text() : Promise.reject(new Error(`HTTP ${r.status}`))))
      .then((t) => live && setText(t))
      .catch((e: unknown) => live && setFailed(e instanceof Error ? e.message : String(e)));
    return () => {
      live = false;
    };
  }, []);
  return (
    <Overlay
      title="Fidelity: the papers’ results against the model"
      testId="fidelity-doc"
      close={<Close testId="fidelity-doc-close" onClose={onClose} />}
      onClose={onClose}
    >
      {failed && <p>The fidelity table could not be loaded ({failed}).</p>}
      {!failed && text === null && <p className="muted">Loading the fidelity table…</p>}
      {/* The file's own title is the overlay's. */}
      {text !== null && <Markdown text={text.replace(/^# .*\n/, '')} headingLevel={2} />}
    </Overlay>
  );
}

export function About({ onClose }: { readonly onClose: () => void }) {
  const [fidelity, setFidelity] = useState(false);
  if (fidelity) return <FidelityDoc onClose={() => setFidelity(false)} />;
  return (
    <Overlay
      title="About schedlab"
      testId="about"
      close={<Close testId="about-close" onClose={onClose} />}
      onClose={onClose}
    >
      <h3>The words</h3>
      <p>
        A <strong>hypervisor</strong> runs several operating systems on one machine, each in its own virtual
        machine. <strong>Xen</strong> is one (a small hypervisor with a privileged Linux beside it),{' '}
        <strong>KVM</strong> another (Linux itself acting as the hypervisor). Xen calls a virtual machine a{' '}
        <strong>domain</strong>. A domain’s operating system sees virtual CPUs, <strong>vCPUs</strong>; the
        machine has physical CPUs, <strong>pCPUs</strong>, and the hypervisor’s scheduler decides which vCPU
        runs on which pCPU, and for how long. <strong>dom0</strong> is Xen’s first, privileged domain: it owns
        the real network card and disk, so every packet and disk block of the other domains passes through it,
        and when dom0 waits for a pCPU, their I/O waits too. The Glossary explains the rest.
      </p>
      <h3>What the lab models</h3>
      <p>
        A discrete-event simulation of a virtualised host: pCPUs, domains with vCPUs, the guest tasks inside
        them (CPU-bound loops, servers, barrier jobs, disk and network I/O through the driver domain dom0),
        and the hypervisor’s scheduler deciding which vCPU runs where. Xen’s Credit, Credit2 and SEDF and the
        papers’ schedulers (task-aware scheduling, co-scheduling, xBalloon, Xen and Co., the enhanced Credit)
        run the same scenario side by side, in integer nanoseconds and seeded random streams, so a run is the
        same in every browser.
      </p>
      <h3>What it leaves out</h3>
      <p>
        Real hardware: caches, memory and TLB effects, interrupts’ own cost beyond the host cost profile, real
        network stacks and disks (modelled as queues with calibrated service times), and the guests’ kernels
        beyond the scheduling they do. Where a paper leaves a parameter out the model chooses once and says
        so; a result it cannot reproduce is kept as “not reproduced”, with the paper’s value and the reason.
      </p>
      <h3>How faithful it is</h3>
      <p>
        Every paper figure and claim, the model’s value beside the paper’s, is in the fidelity table:{' '}
        <a
          href="fidelity.md"
          data-testid="about-fidelity"
          onClick={(e) => {
            e.preventDefault();
            setFidelity(true);
          }}
        >
          the fidelity table
        </a>
        .
      </p>
      <h3>Citing the papers</h3>
      <ul className="cite">
        <li>
          000: H. Kim, H. Lim, J. Jeong, H. Jo, J. Lee. Transparently bridging semantic gap in CPU management
          for virtualized environments. J. Parallel Distrib. Comput. 71 (2011).
        </li>
        <li>
          001: C. Weng, Z. Wang, M. Li, X. Lu. The hybrid scheduling framework for virtual machine systems.
          VEE 2009.
        </li>
        <li>002: xBalloon: preserving I/O prioritization in virtualized OSes. SoCC 2017 (slides).</li>
        <li>003: Analysis of Xen CPU schedulers and an enhanced credit scheduler. MSc thesis.</li>
        <li>
          004: S. Govindan, A. R. Nath, A. Das, B. Urgaonkar, A. Sivasubramaniam. Xen and Co.:
          communication-aware CPU scheduling for consolidated Xen-based hosting platforms. VEE 2007.
        </li>
      </ul>
      <p className="muted">
        Cite the paper whose result a figure shows, and schedlab as the simulator that produced it (name the
        scenario and its seed: the share link carries both).
      </p>
    </Overlay>
  );
}
