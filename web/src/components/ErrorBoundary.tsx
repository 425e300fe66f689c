import { Component, type ErrorInfo, type ReactNode } from 'react';

interface Props {
  /** What to show instead of the children; `reset` tries the children again. */
  readonly fallback: (error: Error, reset: () => void) => ReactNode;
  /** Changing this clears a caught error (e.g. the scenario changed). */
  readonly resetKey?: unknown;
  readonly children: ReactNode;
}

interface State {
  readonly error: Error | null;
  readonly key: unknown;
}

/** Catches render errors so a bug in one view shows a banner instead of a blank page. */
export class ErrorBoundary extends Component<Props, State> {
  state: State = { error: null, key: this.props.resetKey };

  static getDerivedStateFromError(error: unknown): Partial<State> {
    return { error: error instanceof Error ? error : new Error(String(error)) };
  }

  static getDerivedStateFromProps(props: Props, state: State): Partial<State> | null {
    return props.resetKey !== state.key ? { error: null, key: props.resetKey } : null;
  }

  componentDidCatch(error: Error, info: ErrorInfo): void {
    console.error('schedlab: view crashed', error, info.componentStack);
  }

  private reset = () => this.setState({ error: null });

  render(): ReactNode {
    return this.state.error ? this.props.fallback(this.state.error, this.reset) : this.props.children;
  }
}
