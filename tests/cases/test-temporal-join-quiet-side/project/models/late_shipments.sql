-- The orders nothing was shipped for within four hours: a LEFT interval join pads an
-- order with nulls once the shipments' watermark has passed its four hours.
SELECT o.order_id, o.customer_id, o.ordered_at
FROM source('orders') AS o
LEFT JOIN source('shipments') AS s
  ON o.order_id = s.order_id
 AND s.shipped_at BETWEEN o.ordered_at AND o.ordered_at + INTERVAL '4' HOUR
WHERE s.shipment_id IS NULL
