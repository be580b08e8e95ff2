-- Each order with the same customer's orders placed one to two hours after it: a source
-- joined with itself, each event reaching both sides of the interval join.
SELECT a.order_id, a.ordered_at, b.order_id AS later_id, b.ordered_at AS later_at
FROM source('orders') AS a
JOIN source('orders') AS b
  ON a.customer_id = b.customer_id
 AND b.ordered_at BETWEEN a.ordered_at + INTERVAL '1' HOUR AND a.ordered_at + INTERVAL '2' HOUR
