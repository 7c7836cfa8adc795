import { render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { job } from '../test/fixtures';
import { LiveProgress, formatDuration } from './live-progress';

afterEach(() => {
  vi.restoreAllMocks();
});

const running = (processed: number) =>
  job({ name: 'March leads', status: 'processing', total: 10_000, processed, completed_at: null });

describe('a list’s live progress', () => {
  it('fills the card and gives the rate and the time left once the count has moved', () => {
    const now = vi.spyOn(Date, 'now').mockReturnValue(1_000_000);
    const view = render(<LiveProgress job={running(1_000)} />);
    const bar = screen.getByRole('progressbar', { name: 'Progress of March leads' });
    expect(bar).toHaveAttribute('value', '1000');
    expect(bar.parentElement).toHaveClass('progress-wide');
    expect(screen.getByText('Measuring the rate…')).toBeInTheDocument();

    // 500 more in 10 s: 50 a second, 8,500 left → 170 s → "3 min".
    now.mockReturnValue(1_010_000);
    view.rerender(<LiveProgress job={running(1_500)} />);
    expect(screen.getByText('50 addresses a second')).toBeInTheDocument();
    expect(screen.getByText('About 3 min left')).toBeInTheDocument();
    expect(screen.getByText('1,500 of 10,000 verified (15%)')).toBeInTheDocument();

    // A re-render with the same count keeps the rate measured when the count arrived.
    now.mockReturnValue(1_030_000);
    view.rerender(<LiveProgress job={running(1_500)} />);
    expect(screen.getByText('50 addresses a second')).toBeInTheDocument();
  });

  it('shows no rate once the job is done', () => {
    render(<LiveProgress job={job({ name: 'March leads' })} />);
    expect(screen.getByText('1,000 of 1,000 verified (100%)')).toBeInTheDocument();
    expect(screen.queryByText(/a second/)).not.toBeInTheDocument();
  });

  it('says durations in seconds, minutes or hours', () => {
    expect([formatDuration(0.2), formatDuration(45), formatDuration(170), formatDuration(7_500)]).toEqual([
      '1 s',
      '45 s',
      '3 min',
      '2 h 5 min',
    ]);
  });
});
