-- Every order and every shipment, paired when the shipment left within four hours of the
-- order; each side's unpaired rows padded once they can pair no more.
SELECT COALESCE(o.order_id, s.order_id) AS order_id, o.ordered_at, s.shipment_id, s.shipped_at
FROM source('orders') AS o
FULL JOIN source('shipments') AS s
  ON o.order_id = s.order_id
 AND s.shipped_at BETWEEN o.ordered_at AND o.ordered_at + INTERVAL '4' HOUR
