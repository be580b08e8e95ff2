-- Each order once, as first placed: shops send an order again when they retry, sometimes
-- with a corrected time. The earliest copy of each order is kept and written once the
-- watermark passes it; a copy that arrives after that is dropped as late.
SELECT order_id, customer_id, amount, placed_at
FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY order_id ORDER BY placed_at) AS rn
  FROM source('order_events')
)
WHERE rn = 1
