-- Orders and shipments of the same instant, whatever their ids: an interval join of equal
-- times, with no equal columns.
SELECT o.order_id, s.shipment_id, o.ordered_at
FROM source('orders') AS o
JOIN source('shipments') AS s ON s.shipped_at = o.ordered_at
