// The share link: the page's URL already is one; this shows it whole, ready to copy.
import { useEffect, useRef, useState } from 'react';

interface Props {
  readonly url: string;
  readonly onClose: () => void;
}

export function SharePanel({ url, onClose }: Props) {
  const ref = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    ref.current?.select();
  }, [url]);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(url);
      setCopied(true);
    } catch {
      // No clipboard permission: the link is selected for Ctrl+C.
      ref.current?.select();
    }
  };
  return (
    <section className="share-panel" data-testid="share-panel" aria-label="Share link">
      <label htmlFor="share-url">
        Link to this scenario, its columns and this view ({url.length.toLocaleString('en')} characters)
      </label>
      <div className="row">
        <input id="share-url" ref={ref} data-testid="share-url" readOnly value={url} />
        <button type="button" data-testid="copy-link" onClick={() => void copy()}>
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
    </section>
  );
}
