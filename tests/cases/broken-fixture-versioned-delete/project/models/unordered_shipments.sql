-- The shipments no order placed in the four hours before explains: a RIGHT interval join
-- pads a shipment once the orders' watermark has passed its time.
SELECT s.shipment_id, s.order_id, s.carrier, s.shipped_at
FROM source('orders') AS o
RIGHT JOIN source('shipments') AS s
  ON o.order_id = s.order_id
 AND s.shipped_at BETWEEN o.ordered_at AND o.ordered_at + INTERVAL '4' HOUR
WHERE o.order_id IS NULL
