-- Shipped orders per hour of ordering: a window after the interval join, whose watermark
-- is held back by the join's four hours.
SELECT window_start, window_end, COUNT(*) AS shipped, SUM(amount) AS revenue
FROM TABLE(TUMBLE(TABLE ref('shipped_orders'), DESCRIPTOR(ordered_at), INTERVAL '1' HOUR))
GROUP BY window_start, window_end
